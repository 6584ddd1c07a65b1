//! The timing harness the benches share: each benchmark is a loop body
//! taking an iteration count, calibrated to about 20 ms, then sampled
//! `ROUNDS` times round robin across the benchmarks (the machines here are
//! noisy: medians, not means, and ratios taken within a round), in
//! nanoseconds per iteration.

#![allow(dead_code)]

use std::path::Path;
use std::time::Instant;

/// Samples per benchmark.
pub const ROUNDS: usize = 15;

/// A named loop: `body(n)` runs `n` iterations.
pub type Bench<'a> = (&'static str, Box<dyn FnMut(i64) + 'a>);

/// Iterations of `body` that take about 20 ms.
fn calibrate(body: &mut dyn FnMut(i64)) -> i64 {
    let mut iters: i64 = 1;
    loop {
        let t = Instant::now();
        body(iters);
        let dt = t.elapsed().as_secs_f64();
        if dt > 0.02 || iters > 1 << 40 {
            return iters;
        }
        iters *= if dt < 0.002 { 10 } else { 2 };
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The samples of a run of benchmarks.
pub struct Results {
    names: Vec<&'static str>,
    samples: Vec<Vec<f64>>,
}

/// Calibrate each benchmark, then take `ROUNDS` samples of each, one of
/// each benchmark per round so that a noisy stretch hits them all alike.
pub fn run(benches: &mut [Bench<'_>]) -> Results {
    let iters: Vec<i64> = benches.iter_mut().map(|(_, b)| calibrate(&mut **b)).collect();
    let mut samples = vec![Vec::with_capacity(ROUNDS); benches.len()];
    for _ in 0..ROUNDS {
        for (k, (_, b)) in benches.iter_mut().enumerate() {
            let t = Instant::now();
            b(iters[k]);
            samples[k].push(t.elapsed().as_secs_f64() * 1e9 / iters[k] as f64);
        }
    }
    Results {
        names: benches.iter().map(|(n, _)| *n).collect(),
        samples,
    }
}

impl Results {
    fn index(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("no benchmark {name}"))
    }

    /// Per benchmark: name, median, min and max ns per iteration.
    pub fn rows(&self) -> Vec<(&'static str, f64, f64, f64)> {
        self.names
            .iter()
            .zip(&self.samples)
            .map(|(n, s)| {
                let mut v = s.clone();
                let med = median(&mut v);
                (*n, med, v[0], v[v.len() - 1])
            })
            .collect()
    }

    /// The median ns per iteration of `name`.
    pub fn median(&self, name: &str) -> f64 {
        median(&mut self.samples[self.index(name)].clone())
    }

    /// The median over rounds of `a`'s time over `b`'s in the same round.
    pub fn ratio(&self, a: &str, b: &str) -> f64 {
        let (a, b) = (self.index(a), self.index(b));
        let mut r: Vec<f64> = (0..ROUNDS)
            .map(|i| self.samples[a][i] / self.samples[b][i])
            .collect();
        median(&mut r)
    }

    /// Print the table of medians, minima and maxima.
    pub fn print_table(&self) {
        println!(
            "{:<28} {:>10} {:>10} {:>10}",
            "benchmark", "median ns", "min", "max"
        );
        for (name, med, min, max) in self.rows() {
            println!("{name:<28} {med:>10.2} {min:>10.2} {max:>10.2}");
        }
        println!();
    }

    /// Write `{"unit": "ns_per_call", "results": [...], "ratios": {...}}`.
    pub fn write_json(&self, path: &Path, ratios: &[(&str, f64)]) {
        let rows = self.rows();
        let mut s = String::from("{\"unit\": \"ns_per_call\", \"results\": [\n");
        for (i, (name, med, min, max)) in rows.iter().enumerate() {
            s.push_str(&format!(
                "  {{\"name\": \"{name}\", \"ns_per_op\": {med:.3}, \"min\": {min:.3}, \"max\": {max:.3}}}{}\n",
                if i + 1 < rows.len() { "," } else { "" }
            ));
        }
        s.push_str("], \"ratios\": {\n");
        for (i, (name, r)) in ratios.iter().enumerate() {
            s.push_str(&format!(
                "  \"{name}\": {r:.4}{}\n",
                if i + 1 < ratios.len() { "," } else { "" }
            ));
        }
        s.push_str("}}\n");
        std::fs::write(path, s).unwrap();
        println!("\nwrote {}", path.display());
    }
}

/// The value of `--json FILE` among the program's arguments.
pub fn json_arg() -> Option<std::path::PathBuf> {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--json" {
            return args.next().map(Into::into);
        }
    }
    None
}
