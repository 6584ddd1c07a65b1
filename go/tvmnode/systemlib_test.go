package tvmnode_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	tn "tvmnode.dev/go/tvmnode"
)

// A model linked into a Go program as the system library: the program of
// testdata/systemlib, built with the ad01 archive's generated C compiled
// with -DTVMGEN_SYSTEM_LIB (the model registers itself from a constructor
// before main), finds the model with SystemModule, describes it as
// LoadModule describes the same model in its shared library, and gives
// the same output bytes for the same inputs (the executor's); the error
// for a model it does not hold names the one it does, and nothing is left
// alive once it has closed everything.
func TestSystemModuleOfALinkedModel(t *testing.T) {
	c := model(t, "ad01")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the program with: %v", err)
	}
	noLeaks(t)
	dir := t.TempDir()
	prog := buildSystemProgram(t, goTool, c.arch, dir)

	var inputs []string
	for k, x := range c.inputs {
		p := filepath.Join(dir, fmt.Sprintf("x%d.bin", k))
		check(t, os.WriteFile(p, rawBytes(t, x.Data), 0o644))
		inputs = append(inputs, p)
	}
	cmd := exec.Command(prog, append([]string{"ad01"}, inputs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", prog, err, stdout, stderr.Bytes())
	}
	t.Logf("%s printed:\n%s", filepath.Base(prog), stdout)
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")

	// The same model from its shared library.
	m := must(tn.LoadModule(c.lib))
	defer m.Close()
	want := []string{
		fmt.Sprintf("info: %+v", m.Info()),
		fmt.Sprintf("inputs: %+v", m.Inputs()),
		fmt.Sprintf("outputs: %+v", m.Outputs()),
	}
	if len(lines) != len(want)+2 {
		t.Fatalf("the program printed:\n%s", stdout)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("the system module's description differs from the library's:\n got %s\nwant %s",
				lines[i], w)
		}
	}
	name := m.Inputs()[0].Name
	for k, x := range c.inputs {
		got := must(os.ReadFile(inputs[k] + ".out"))
		check(t, m.SetInput(name, x.Data))
		check(t, m.Run())
		out := must(m.Output(0))
		lib := must(out.Bytes())
		if !bytes.Equal(got, lib) {
			t.Errorf("input %d: the system module's output differs from the library's", k)
		}
		out.Close()
		if !bytes.Equal(got, rawBytes(t, c.want[k].Data)) {
			t.Errorf("input %d: the system module's output differs from the executor's", k)
		}
	}

	// What the program said of an unknown model, and of its objects.
	unknown := lines[len(want)]
	for _, part := range []string{"KeyError", "no_such_model", "'ad01'"} {
		if !strings.Contains(unknown, part) {
			t.Errorf("the error for an unknown model does not mention %s: %s", part, unknown)
		}
	}
	if left := lines[len(want)+1]; left != "left alive: 0" {
		t.Errorf("the program's objects: %s", left)
	}
}

// buildSystemProgram builds testdata/systemlib with the C of the archive
// arch in a module of its own under dir (requiring this one, from this
// source tree) and returns the executable's path.
func buildSystemProgram(t *testing.T, goTool, arch, dir string) string {
	t.Helper()
	root, err := filepath.Abs("..") // the module tvmnode.dev/go
	check(t, err)
	src := filepath.Join(dir, "systemlib")
	check(t, os.MkdirAll(src, 0o755))
	check(t, copyFile(filepath.Join("testdata", "systemlib", "main.go"), filepath.Join(src, "main.go")))
	// The generated code and the crt's sources beside main.go (cgo compiles
	// them into the program), their headers in include/.
	for _, d := range []string{filepath.Join("codegen", "host", "src"), filepath.Join("runtime", "src")} {
		files, err := os.ReadDir(filepath.Join(arch, d))
		check(t, err)
		for _, f := range files {
			if f.IsDir() { // headers included by their folder's name (x86/, arm_dsp/)
				check(t, copyTree(filepath.Join(arch, d, f.Name()), filepath.Join(src, f.Name())))
				continue
			}
			if ext := filepath.Ext(f.Name()); ext != ".c" && ext != ".h" {
				continue
			}
			to := filepath.Join(src, f.Name())
			if _, err := os.Stat(to); err == nil {
				t.Fatalf("two sources named %s in %s", f.Name(), arch)
			}
			check(t, copyFile(filepath.Join(arch, d, f.Name()), to))
		}
	}
	for _, d := range []string{filepath.Join("codegen", "host", "include"), filepath.Join("runtime", "include")} {
		check(t, copyTree(filepath.Join(arch, d), filepath.Join(src, "include")))
	}
	gomod := fmt.Sprintf("module systemlib\n\ngo 1.19\n\nrequire tvmnode.dev/go v0.0.0\n\n"+
		"replace tvmnode.dev/go => %q\n", root)
	check(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod), 0o644))

	exe := filepath.Join(dir, "systemlib-prog")
	args := []string{"build", "-o", exe}
	// Built as this test is (with the race detector under go test -race),
	// the program reuses the packages already built for the test.
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				args = append(args, "-race")
			}
		}
	}
	cmd := exec.Command(goTool, append(args, ".")...)
	cmd.Dir = src
	// The environment of this test (go/tools.sh: pkg-config, caches), with
	// no workspace and nothing to download.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the system-library program: %v\n%s", err, out)
	}
	return exe
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// copyTree copies the files under from into to, merging folders.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		return copyFile(path, filepath.Join(to, rel))
	})
}

// rawBytes is a slice's elements as the Module holds them (little-endian:
// the binding's targets are).
func rawBytes(t testing.TB, data interface{}) []byte {
	t.Helper()
	var b bytes.Buffer
	check(t, binary.Write(&b, binary.LittleEndian, data))
	return b.Bytes()
}
