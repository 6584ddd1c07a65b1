// Package modeltest makes what the Module tests need with the Python
// tooling (the `tvmnode` command line): shared libraries of the bundled
// trained models, compiled ahead of time, and reference outputs from the
// host executor. It finds an interpreter that has the tvmnode package as
// $TVMNODE_PYTHON, or else the virtual environment that python/run_tests.sh
// makes in the build tree named by $TVMNODE_BUILD_DIR (go/tools.sh sets
// it), or in build/; the models come from $TVMNODE_MODELS_DIR, or
// ../shared/models beside the repository.
package modeltest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Tooling runs the Python tooling.
type Tooling struct {
	python string
	env    []string
	// Models is the folder of the bundled trained models.
	Models string
}

// repoRoot is the repository this file sits in (go/internal/modeltest).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Find locates the tooling and the models. When either is missing it
// returns nil and why, for a test to skip with.
func Find() (*Tooling, string) {
	root := repoRoot()
	t := &Tooling{Models: os.Getenv("TVMNODE_MODELS_DIR")}
	if t.Models == "" {
		t.Models = filepath.Join(root, "..", "shared", "models")
	}
	if _, err := os.Stat(filepath.Join(t.Models, "kws_ref_model.tflite")); err != nil {
		return nil, fmt.Sprintf("no trained models in %s (set TVMNODE_MODELS_DIR)", t.Models)
	}
	env := os.Environ()
	if os.Getenv("TVMNODE_SOURCE_DIR") == "" {
		env = append(env, "TVMNODE_SOURCE_DIR="+root) // where the crt's sources are
	}
	t.python = os.Getenv("TVMNODE_PYTHON")
	if t.python == "" {
		// The build tree's virtual environment, or the default tree's
		// (a benchmark build tree has none; the tooling's output does not
		// depend on the library it was built against).
		var tried []string
		for _, build := range []string{os.Getenv("TVMNODE_BUILD_DIR"), filepath.Join(root, "build")} {
			py := filepath.Join(build, "python", "venv", "bin", "python")
			if build == "" {
				continue
			}
			if _, err := os.Stat(py); err != nil {
				tried = append(tried, py)
				continue
			}
			t.python = py
			path := filepath.Join(build, "python", "lib")
			if old := os.Getenv("PYTHONPATH"); old != "" {
				path += string(os.PathListSeparator) + old
			}
			env = append(env, "PYTHONPATH="+path, "TVMNODE_BUILD_DIR="+build)
			break
		}
		if t.python == "" {
			return nil, fmt.Sprintf("no Python tooling (none of %s; run python/run_tests.sh BUILD_DIR "+
				"first, or set TVMNODE_PYTHON to an interpreter with the tvmnode package)",
				strings.Join(tried, ", "))
		}
	}
	t.env = env
	if out, err := t.command("-c", "import tvmnode.cli, tflite").CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("no Python tooling: %s cannot import tvmnode and tflite: %v\n%s",
			t.python, err, out)
	}
	return t, ""
}

func (t *Tooling) command(args ...string) *exec.Cmd {
	cmd := exec.Command(t.python, args...)
	cmd.Env = t.env
	return cmd
}

// Tvmnode runs `tvmnode ARGS...`; the error holds its output.
func (t *Tooling) Tvmnode(args ...string) error {
	cmd := t.command(append([]string{"-m", "tvmnode"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("tvmnode %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Model is the path of a bundled model file.
func (t *Tooling) Model(file string) string { return filepath.Join(t.Models, file) }

// Compile compiles model (a file in the models folder) as name into the
// archive dir/name and builds dir/name.so, a library LoadModule opens:
// with `tvmnode compile --shared` where the tooling has it, or else by
// compiling the archive with cc and a list tvmnode_module_models naming
// the model's descriptor (what --shared adds). Flags are more options of
// `tvmnode compile` (e.g. --io-in-pool). Returns the library's path.
func (t *Tooling) Compile(model, name, dir string, flags ...string) (string, error) {
	lib := filepath.Join(dir, name+".so")
	arch := filepath.Join(dir, name)
	args := append([]string{"compile", t.Model(model), "--name", name, "-o", arch}, flags...)
	err := t.Tvmnode(append(args, "--shared", lib)...)
	if err == nil {
		return lib, nil
	}
	if !strings.Contains(err.Error(), "unrecognized arguments: --shared") {
		return "", err
	}
	if err := t.Tvmnode(args...); err != nil {
		return "", err
	}
	return lib, buildLibrary(arch, name, lib)
}

// buildLibrary compiles an archive into a shared library that exports its
// descriptor in tvmnode_module_models.
func buildLibrary(arch, name, lib string) error {
	srcs, _ := filepath.Glob(filepath.Join(arch, "codegen", "host", "src", "*.c"))
	rt, _ := filepath.Glob(filepath.Join(arch, "runtime", "src", "*.c"))
	srcs = append(srcs, rt...)
	exported := false
	for _, s := range srcs {
		if b, err := os.ReadFile(s); err == nil && bytes.Contains(b, []byte("tvmnode_module_models")) {
			exported = true
		}
	}
	if !exported {
		shim := filepath.Join(arch, "tvmnode_module_models.c")
		text := fmt.Sprintf("#include \"tvmgen_%[1]s.h\"\n"+
			"__attribute__((visibility(\"default\")))\n"+
			"const TnCrtModel *const tvmnode_module_models[] = {&tvmgen_%[1]s_model, 0};\n", name)
		if err := os.WriteFile(shim, []byte(text), 0o644); err != nil {
			return err
		}
		srcs = append(srcs, shim)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	args := []string{"-std=c99", "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
		"-I" + filepath.Join(arch, "codegen", "host", "include"),
		"-I" + filepath.Join(arch, "runtime", "include")}
	args = append(args, srcs...)
	args = append(args, "-o", lib, "-lm")
	out, err := exec.Command(cc, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return nil
}

// Streaming builds the streaming model of python/tests/streaming_fixture.py
// in dir: dir/stream.so (model "stream", two int8 states), dir/inputs.bin
// (Steps inputs of 8 int8) and dir/want.bin (per step the outputs "sum"
// and "prev", 8 int8 each, from the host executor, reset before step
// ResetAt). Returns the library's path.
func (t *Tooling) Streaming(dir string) (string, error) {
	script := filepath.Join(repoRoot(), "python", "tests", "streaming_fixture.py")
	if out, err := t.command(script, dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", script, err, out)
	}
	return filepath.Join(dir, "stream.so"), nil
}

// The streaming fixture's steps, and the step before which it is reset.
const (
	Steps   = 6
	ResetAt = 4
)

// Reference runs model on the host executor (`tvmnode run`) with the
// inputs in the .npy files inputs and writes its (one) output to output.
func (t *Tooling) Reference(model string, inputs []string, output string) error {
	args := []string{"run", t.Model(model)}
	for _, in := range inputs {
		args = append(args, "--input", in)
	}
	return t.Tvmnode(append(args, "--output", output)...)
}
