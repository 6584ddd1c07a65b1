//! What the Module tests and the Module benchmark need from the Python
//! tooling (the `tvmnode` command line): shared libraries of the bundled
//! trained models, compiled ahead of time, and reference outputs from the
//! host executor (`tvmnode run`), exchanged as `.npy` files.
//!
//! The interpreter is `$TVMNODE_PYTHON` (one that imports the tvmnode
//! package), or else the virtual environment python/run_tests.sh makes in
//! the build tree: `$TVMNODE_BUILD_DIR` (rust-sys/run_tests.sh exports it),
//! or the tree this crate was linked against, with `python/lib` on
//! `PYTHONPATH`. The models come from `$TVMNODE_MODELS_DIR` (or
//! `$TVMNODE_MODELS`), else `../shared/models` beside the repository. When
//! either is missing, [`tooling`] says why and the tests that need it skip.
//!
//! Everything is built once per test process, in parallel, under
//! `CARGO_TARGET_TMPDIR/module-models/<test binary>`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The bundled models: (file stem, model name in the library).
pub const MODELS: &[(&str, &str)] = &[
    ("ad01_int8", "ad"),
    ("ad01_fp32", "ad_f32"),
    ("kws_ref_model", "kws"),
    ("kws_ref_model_float32", "kws_f32"),
    ("pretrainedResnet_quant", "resnet"),
    ("pretrainedResnet", "resnet_f32"),
    ("str_ww_ref_model", "ww"),
];

/// How to run the tooling.
pub struct Tooling {
    python: PathBuf,
    env: Vec<(String, String)>,
    /// The folder of the bundled models.
    pub models: PathBuf,
    /// Where this process builds.
    pub out: PathBuf,
}

fn repo_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The build tree: `$TVMNODE_BUILD_DIR`, or the one whose library this
/// crate was linked against (`<build>/libtvmnode/.libs`).
fn build_dir() -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("TVMNODE_BUILD_DIR") {
        return Some(PathBuf::from(b));
    }
    let lib = Path::new(env!("TVMNODE_LIB_DIR"));
    (lib.ends_with("libtvmnode/.libs")).then(|| lib.join("../.."))
}

fn find() -> Result<Tooling, String> {
    let models = std::env::var_os("TVMNODE_MODELS_DIR")
        .or_else(|| std::env::var_os("TVMNODE_MODELS"))
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/models"));
    if !models.join("ad01_int8.tflite").exists() {
        return Err(format!(
            "no trained models in {} (set TVMNODE_MODELS_DIR)",
            models.display()
        ));
    }
    let mut env = vec![(
        "TVMNODE_SOURCE_DIR".to_string(),
        std::env::var("TVMNODE_SOURCE_DIR").unwrap_or_else(|_| repo_root().display().to_string()),
    )];
    let python = match std::env::var_os("TVMNODE_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => {
            let Some(build) = build_dir() else {
                return Err(
                    "no Python tooling: set TVMNODE_PYTHON to an interpreter with the \
                            tvmnode package, or TVMNODE_BUILD_DIR to a build tree where \
                            python/run_tests.sh has run"
                        .into(),
                );
            };
            let python = build.join("python/venv/bin/python");
            if !python.exists() {
                return Err(format!(
                    "no Python tooling: {} does not exist (run python/run_tests.sh {} first, or \
                     set TVMNODE_PYTHON)",
                    python.display(),
                    build.display()
                ));
            }
            let mut path = build.join("python/lib").display().to_string();
            if let Ok(old) = std::env::var("PYTHONPATH") {
                path = format!("{path}:{old}");
            }
            env.push(("PYTHONPATH".into(), path));
            env.push(("TVMNODE_BUILD_DIR".into(), build.display().to_string()));
            python
        }
    };
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("test");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("module-models")
        .join(stem);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let t = Tooling {
        python,
        env,
        models,
        out,
    };
    t.python(&["-c", "import tvmnode.cli, tflite"])
        .map_err(|e| format!("no Python tooling: {e}"))?;
    Ok(t)
}

/// The tooling, or why there is none (printed once).
pub fn tooling() -> Result<&'static Tooling, &'static str> {
    static T: OnceLock<Result<Tooling, String>> = OnceLock::new();
    let t = T.get_or_init(|| {
        let t = find();
        if let Err(why) = &t {
            eprintln!("skipping the tests that need compiled models: {why}");
        }
        t
    });
    t.as_ref().map_err(|e| e.as_str())
}

/// `Some(tooling)`, or prints why the calling test skips.
pub fn or_skip(test: &str) -> Option<&'static Tooling> {
    match tooling() {
        Ok(t) => Some(t),
        Err(why) => {
            println!("{test}: skipped: {why}");
            None
        }
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let mut line = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        line = format!("{line} {}", a.to_string_lossy());
    }
    let out = cmd.output().map_err(|e| format!("{line}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{line}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

impl Tooling {
    fn python(&self, args: &[&str]) -> Result<(), String> {
        let mut cmd = Command::new(&self.python);
        cmd.args(args).envs(self.env.iter().map(|(k, v)| (k, v)));
        run(&mut cmd)
    }

    /// `tvmnode ARGS...`.
    pub fn tvmnode(&self, args: &[&str]) -> Result<(), String> {
        let mut all = vec!["-m", "tvmnode"];
        all.extend_from_slice(args);
        self.python(&all)
    }

    /// The path of a bundled model file.
    pub fn model(&self, stem: &str) -> PathBuf {
        self.models.join(format!("{stem}.tflite"))
    }

    /// Compile bundled model `stem` as `name` into the archive `dir/name`
    /// and build the library `dir/name.so` from it (`tvmnode compile
    /// --shared`). Returns the library's path.
    pub fn compile(&self, stem: &str, name: &str, dir: &Path) -> Result<PathBuf, String> {
        let lib = dir.join(format!("{name}.so"));
        let model = self.model(stem);
        let arch = dir.join(name);
        let args = [
            "compile",
            path_str(&model),
            "--name",
            name,
            "-o",
            path_str(&arch),
            "--shared",
            path_str(&lib),
        ];
        self.tvmnode(&args)?;
        Ok(lib)
    }

    /// Build the archive `arch` into the library `lib` with extra C flags
    /// (`tvmnode.codegen.build_library`).
    pub fn build_library(&self, arch: &Path, lib: &Path, cflags: &[&str]) -> Result<(), String> {
        let script = "import sys; from tvmnode import codegen; \
                      codegen.build_library(sys.argv[1], sys.argv[2], cflags=['-O2'] + sys.argv[3:])";
        let mut args = vec!["-c", script, path_str(arch), path_str(lib)];
        args.extend_from_slice(cflags);
        self.python(&args)
    }

    /// Build the streaming model of python/tests/streaming_fixture.py in
    /// `dir`: `dir/stream.so` (model "stream", two int8 states),
    /// `dir/inputs.bin` ([`STREAM_STEPS`] inputs of 8 int8) and
    /// `dir/want.bin` (per step the outputs "sum" and "prev", 8 int8 each,
    /// from the host executor, reset before step [`STREAM_RESET_AT`]).
    pub fn streaming(&self, dir: &Path) -> Result<PathBuf, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/tests/streaming_fixture.py");
        self.python(&[path_str(&script), path_str(dir)])?;
        Ok(dir.join("stream.so"))
    }

    /// Run bundled model `stem` on the host executor with the inputs in the
    /// `.npy` files `inputs`, writing its output to `output`.
    pub fn reference(&self, stem: &str, inputs: &[&Path], output: &Path) -> Result<(), String> {
        let model = self.model(stem);
        let mut args = vec!["run", path_str(&model)];
        for i in inputs {
            args.extend(["--input", path_str(i)]);
        }
        args.extend(["--output", path_str(output)]);
        self.tvmnode(&args)
    }
}

/// The streaming fixture's steps, and the step before which it is reset.
pub const STREAM_STEPS: usize = 6;
pub const STREAM_RESET_AT: usize = 4;

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// One bundled model, built: its library and the executor's output for
/// `input`.
pub struct Built {
    /// File stem in the models folder.
    pub stem: &'static str,
    /// Model name in the library.
    pub name: &'static str,
    /// The shared library.
    pub lib: PathBuf,
    /// The input (`.npy`) the reference ran on.
    pub input: Npy,
    /// The host executor's output for it.
    pub expected: Npy,
}

/// Build the library of every bundled model and its reference output, two
/// at a time, once per process. The input of each is [`input_for`] its
/// first input's shape and dtype, read from the compiled archive's
/// metadata.json.
pub fn bundled() -> &'static BTreeMap<&'static str, Result<Built, String>> {
    static B: OnceLock<BTreeMap<&'static str, Result<Built, String>>> = OnceLock::new();
    B.get_or_init(|| {
        let t = tooling().expect("bundled() needs the tooling");
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results = std::sync::Mutex::new(BTreeMap::new());
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(stem, name)) = MODELS.get(k) else { break };
                    let r = build_one(t, stem, name);
                    results.lock().unwrap().insert(stem, r);
                });
            }
        });
        results.into_inner().unwrap()
    })
}

/// One bundled model, built (panics with the tooling's output if that
/// failed).
pub fn built(stem: &str) -> &'static Built {
    match bundled().get(stem) {
        Some(Ok(b)) => b,
        Some(Err(e)) => panic!("building {stem} failed:\n{e}"),
        None => panic!("{stem} is not a bundled model"),
    }
}

fn build_one(t: &Tooling, stem: &'static str, name: &'static str) -> Result<Built, String> {
    let dir = t.out.join(stem);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let lib = t.compile(stem, name, &dir)?;
    let meta = std::fs::read_to_string(dir.join(name).join("metadata.json")).map_err(|e| e.to_string())?;
    let (dtype, shape) = first_input(&meta).ok_or("no input in metadata.json")?;
    let input = input_for(&dtype, &shape, 1);
    let x = dir.join("input.npy");
    let y = dir.join("expected.npy");
    input.write(&x)?;
    t.reference(stem, &[&x], &y)?;
    Ok(Built {
        stem,
        name,
        lib,
        input,
        expected: Npy::read(&y)?,
    })
}

/// The dtype and shape of the first input in an archive's metadata.json
/// (`"inputs": [{"name": ..., "shape": [1, 640], "dtype": "int8", ...`).
fn first_input(meta: &str) -> Option<(String, Vec<usize>)> {
    let rest = &meta[meta.find("\"inputs\"")?..];
    let shape_at = rest.find("\"shape\"")?;
    let open = shape_at + rest[shape_at..].find('[')?;
    let close = open + rest[open..].find(']')?;
    let shape = rest[open + 1..close]
        .split(',')
        .map(|d| d.trim().parse().ok())
        .collect::<Option<Vec<usize>>>()?;
    let dt_at = rest.find("\"dtype\"")?;
    let q1 = dt_at + 7 + rest[dt_at + 7..].find('"')?;
    let q2 = q1 + 1 + rest[q1 + 1..].find('"')?;
    Some((rest[q1 + 1..q2].to_string(), shape))
}

/// Deterministic values for an input: the whole range of an integer type,
/// [-2, 2) for a float.
pub fn input_for(dtype: &str, shape: &[usize], seed: u32) -> Npy {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    let (descr, data): (&str, Vec<u8>) = match dtype {
        "int8" => ("|i1", (0..n).map(|_| next() as u8).collect()),
        "uint8" => ("|u1", (0..n).map(|_| next() as u8).collect()),
        "float32" => (
            "<f4",
            (0..n)
                .flat_map(|_| ((next() % 4000) as f32 / 1000.0 - 2.0).to_le_bytes())
                .collect(),
        ),
        other => panic!("no generator for inputs of dtype {other}"),
    };
    Npy {
        descr: descr.into(),
        shape: shape.to_vec(),
        data,
    }
}

/// A `.npy` file (format 1.0, C order, little-endian): what `tvmnode run`
/// reads and writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Npy {
    /// numpy's type string (`|i1`, `<f4`, ...).
    pub descr: String,
    /// The dimensions.
    pub shape: Vec<usize>,
    /// The elements' bytes.
    pub data: Vec<u8>,
}

impl Npy {
    /// Write to `path`.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        let shape = match dims.len() {
            1 => format!("({},)", dims[0]),
            _ => format!("({})", dims.join(", ")),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            self.descr
        );
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&self.data);
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Read `path` (format 1.0 or 2.0, C order).
    pub fn read(path: &Path) -> Result<Npy, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = || format!("{}: not a .npy file this reader knows", path.display());
        if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
            return Err(bad());
        }
        let (len, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 if bytes.len() >= 12 => (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            ),
            _ => return Err(bad()),
        };
        let header =
            std::str::from_utf8(bytes.get(start..start + len).ok_or_else(bad)?).map_err(|_| bad())?;
        if header.contains("'fortran_order': True") {
            return Err(bad());
        }
        let field = |key: &str| header.find(key).map(|i| &header[i + key.len()..]);
        let descr = field("'descr': '")
            .and_then(|r| r.split('\'').next())
            .ok_or_else(bad)?;
        let dims = field("'shape': (")
            .and_then(|r| r.split(')').next())
            .ok_or_else(bad)?;
        let shape = dims
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse::<usize>().map_err(|_| bad()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Npy {
            descr: descr.to_string(),
            shape,
            data: bytes[start + len..].to_vec(),
        })
    }

    /// The elements, for a 1-byte type.
    pub fn as_i8(&self) -> Vec<i8> {
        self.data.iter().map(|&b| b as i8).collect()
    }

    /// The elements, for `<f4`.
    pub fn as_f32(&self) -> Vec<f32> {
        self.data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}
