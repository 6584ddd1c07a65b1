package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tvmnode.dev/go/internal/modeltest"
	"tvmnode.dev/go/internal/npy"
)

// The example on the real model: its classes are those of the host
// executor's outputs (the Python tooling's `tvmnode run`), and bad input
// files are errors that say what is wrong.
func TestClassifiesLikeTheExecutor(t *testing.T) {
	tool, why := modeltest.Find()
	if tool == nil {
		t.Skip("compiled-model test skipped: " + why)
	}
	dir := t.TempDir()
	lib, err := tool.Compile("kws_ref_model.tflite", "kws", dir)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	var files []string
	var want []int
	for k := 0; k < 3; k++ {
		x := make([]int8, 490)
		for i := range x {
			x[i] = int8(rng.Intn(256) - 128)
		}
		xp := filepath.Join(dir, fmt.Sprintf("x%d.npy", k))
		yp := filepath.Join(dir, fmt.Sprintf("y%d.npy", k))
		shape := []int64{1, 49, 10, 1}
		if k == 1 {
			shape = []int64{49, 10} // any shape of as many elements
		}
		if err := npy.WriteFile(xp, npy.Array{Shape: shape, Data: x}); err != nil {
			t.Fatal(err)
		}
		if err := npy.WriteFile(filepath.Join(dir, "ref.npy"), npy.Array{Shape: []int64{1, 49, 10, 1}, Data: x}); err != nil {
			t.Fatal(err)
		}
		if err := tool.Reference("kws_ref_model.tflite", []string{filepath.Join(dir, "ref.npy")}, yp); err != nil {
			t.Fatal(err)
		}
		y, err := npy.ReadFile(yp)
		if err != nil {
			t.Fatal(err)
		}
		best := 0
		for i, v := range y.Data.([]int8) {
			if v > y.Data.([]int8)[best] {
				best = i
			}
		}
		files = append(files, xp)
		want = append(want, best)
	}
	var out bytes.Buffer
	if err := run(append([]string{"-lib", lib}, files...), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(files) {
		t.Fatalf("output:\n%s", out.String())
	}
	for k, line := range lines {
		prefix := fmt.Sprintf("%s: class %d (%s), score ", files[k], want[k], kwsLabels[want[k]])
		if !strings.HasPrefix(line, prefix) || strings.Count(line, " 0.") < 11 {
			t.Errorf("line %d: %s\nwant it to start %s", k, line, prefix)
		}
	}

	// float32 features are quantized; errors name the file and the problem
	f32 := filepath.Join(dir, "f.npy")
	if err := npy.WriteFile(f32, npy.Array{Shape: []int64{49, 10}, Data: make([]float32, 490)}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run([]string{"-lib", lib, f32}, &out); err != nil || !strings.Contains(out.String(), "class ") {
		t.Errorf("float32 features: %v\n%s", err, out.String())
	}
	short := filepath.Join(dir, "short.npy")
	if err := npy.WriteFile(short, npy.Array{Shape: []int64{10}, Data: make([]int8, 10)}); err != nil {
		t.Fatal(err)
	}
	i32 := filepath.Join(dir, "i32.npy")
	if err := npy.WriteFile(i32, npy.Array{Shape: []int64{490}, Data: make([]int32, 490)}); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text.npy")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-lib", lib, short}, "(10 elements)"},
		{[]string{"-lib", lib, i32}, "[]int32"},
		{[]string{"-lib", lib, text}, "not a .npy file"},
		{[]string{"-lib", filepath.Join(dir, "missing.so"), files[0]}, "tvmnode compile"},
		{[]string{"-lib", lib, "-model", "vww", files[0]}, "no model 'vww'"},
		{[]string{"-lib", lib}, "no input files"},
	} {
		err := run(c.args, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
}
