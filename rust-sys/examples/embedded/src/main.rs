//! The example's program: one timed inference of the RFC's plain variant
//! (after a warm-up), then every check of the library.
//!
//! On a Cortex-M4 (`thumbv7em-none-eabihf`) this is firmware for qemu's
//! mps2-an386, linked with firmware/common's harness (build.rs): its reset code
//! enables the FPU, sets up memory and calls `main` below, which prints a
//! line per fact through the harness's semihosting output and returns the
//! exit code qemu exits with. Run it with
//! `qemu-system-arm -M mps2-an386 -nographic -semihosting-config
//! enable=on,target=native -icount shift=0 -kernel FIRMWARE`. It prints
//!
//! ```text
//! model kws (rust)
//! run status 0
//! output identity <12 bytes, hex>
//! instructions <n> ticks=<n>
//! checks 7 passed
//! stack run=<bytes> all=<bytes>
//! done 0
//! ```
//!
//! and exits 0, or 1 when the run, its output or a check failed (4 on a
//! panic, 3 on a fault). On the host it is an ordinary program that runs
//! the same and prints the same lines but the measurements.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

#[cfg(target_os = "none")]
mod firmware {
    use core::ffi::{c_char, c_void, CStr};

    use tvmgen_embedded::{check_all, run_plain, EXPECTED, INPUT};

    // firmware/common's semihost.h and measure.h
    extern "C" {
        fn fw_str(s: *const c_char);
        fn fw_u64(v: u64);
        fn fw_i64(v: i64);
        fn fw_hex(bytes: *const c_void, n: usize);
        fn fw_endl();
        fn fw_exit(code: i32) -> !;
        fn fw_ticks_start();
        fn fw_ticks() -> u64;
        fn fw_stack_used() -> u32;
    }

    const INSTRUCTIONS_PER_TICK: u64 = 40;

    fn text(s: &CStr) {
        // SAFETY: a NUL-terminated string.
        unsafe { fw_str(s.as_ptr()) }
    }

    fn number(v: i64) {
        // SAFETY: plain values.
        unsafe { fw_i64(v) }
    }

    fn end_line() {
        // SAFETY: no arguments.
        unsafe { fw_endl() }
    }

    /// Called by the harness's reset code; its result is the exit code.
    #[no_mangle]
    pub extern "C" fn main() -> i32 {
        let input = INPUT.map(|b| b as i8);
        let mut output = [0i8; 12];
        text(c"model kws (rust)");
        end_line();
        // SAFETY: the harness's SysTick counter, on a single core. As in
        // firmware/common's main.c, a warm-up run comes first: the counter
        // reads its reload value until its first tick, so a reading right
        // after the start is not a time.
        let (run, ticks) = unsafe {
            fw_ticks_start();
            let _ = run_plain(&input, &mut output);
            let t0 = fw_ticks();
            let run = run_plain(&input, &mut output);
            (run, fw_ticks().wrapping_sub(t0))
        };
        // SAFETY: reads the painted stack.
        let stack_run = unsafe { fw_stack_used() };
        let status = run.err().map_or(0, |e| e.code());
        text(c"run status ");
        number(status.into());
        end_line();
        text(c"output identity ");
        // SAFETY: 12 bytes.
        unsafe { fw_hex(output.as_ptr().cast(), output.len()) };
        end_line();
        text(c"instructions ");
        // SAFETY: plain values.
        unsafe { fw_u64(ticks * INSTRUCTIONS_PER_TICK) };
        text(c" ticks=");
        // SAFETY: plain values.
        unsafe { fw_u64(ticks) };
        end_line();
        let checks = check_all();
        match checks {
            Ok(n) => {
                text(c"checks ");
                number(n.into());
                text(c" passed");
            }
            Err(f) => {
                text(c"check failed: ");
                for b in f.check.bytes() {
                    let s = [b, 0];
                    // SAFETY: one character and its NUL.
                    unsafe { fw_str(s.as_ptr().cast()) };
                }
                text(c" status ");
                number(f.status.into());
            }
        }
        end_line();
        text(c"stack run=");
        number(stack_run.into());
        text(c" all=");
        // SAFETY: reads the painted stack.
        number(unsafe { fw_stack_used() }.into());
        end_line();
        let good = status == 0 && output.map(|b| b as u8) == *EXPECTED && checks.is_ok();
        let code = if good { 0 } else { 1 };
        text(c"done ");
        number(code.into());
        end_line();
        code
    }

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        text(c"panic");
        end_line();
        // SAFETY: ends the program.
        unsafe { fw_exit(4) }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    use tvmgen_embedded::{check_all, run_plain, EXPECTED, INPUT};

    let input = INPUT.map(|b| b as i8);
    let mut output = [0i8; 12];
    let status = run_plain(&input, &mut output).err().map_or(0, |e| e.code());
    println!("model kws (rust)");
    println!("run status {status}");
    let hex: String = output.iter().map(|b| format!("{:02x}", *b as u8)).collect();
    println!("output identity {hex}");
    let checks = check_all();
    match checks {
        Ok(n) => println!("checks {n} passed"),
        Err(f) => println!("check failed: {} status {}", f.check, f.status),
    }
    let good = status == 0 && output.map(|b| b as u8) == *EXPECTED && checks.is_ok();
    println!("done {}", if good { 0 } else { 1 });
    std::process::exit(if good { 0 } else { 1 });
}
