//! Shared by the integration tests: a leak check around every test.
//!
//! `tn_object_live_count` counts the objects alive in the whole process
//! (summed over threads), and cargo runs the tests of one binary on several
//! threads at once. So each test holds one process-wide lock for its whole
//! duration: the tests of a binary run one at a time, and the count a test
//! sees at its end can only have been changed by that test. (Test binaries
//! are separate processes and do not interfere.)

#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Asserts on drop that the live-object count is back where it started.
pub struct LeakCheck {
    baseline: i64,
    _serial: MutexGuard<'static, ()>,
}

/// Start a leak-checked test.
pub fn leak_check() -> LeakCheck {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    LeakCheck {
        baseline: tvmnode::live_object_count(),
        _serial: serial,
    }
}

impl LeakCheck {
    /// Objects created since the start of the test and still alive.
    pub fn leaked(&self) -> i64 {
        tvmnode::live_object_count() - self.baseline
    }
}

impl Drop for LeakCheck {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let leaked = self.leaked();
        assert_eq!(leaked, 0, "{leaked} object(s) left alive at the end of the test");
    }
}
