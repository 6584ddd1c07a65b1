// Keyword spotting with a compiled model: load the shared library of the
// MLPerf Tiny keyword-spotting model (compiled ahead of time by tvmnode),
// classify the feature arrays in .npy files, and print the class and the
// scores of each.
//
//	tvmnode compile kws_ref_model.tflite --name kws -o out/ --shared kws.so
//	go run ./examples/kws -lib kws.so sample1.npy sample2.npy
//
// A file holds one input: int8 features as the model takes them, or
// float32 features, which are quantized with the input's scale and zero
// point. Its shape may be the input's (1x49x10x1) or any shape with as
// many elements (49x10). Scores are the output dequantized with the
// output's scale and zero point (the model ends in a softmax: they are
// probabilities).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"tvmnode.dev/go/internal/npy"
	tn "tvmnode.dev/go/tvmnode"
)

// The MLPerf Tiny keyword-spotting classes, in the model's output order.
var kwsLabels = []string{"down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes",
	"silence", "unknown"}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kws:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("kws", flag.ContinueOnError)
	lib := fs.String("lib", "kws.so", "the compiled model's shared library")
	name := fs.String("model", "", "the model's name, when the library holds several")
	labels := fs.String("labels", strings.Join(kwsLabels, ","), "class names, comma-separated (empty: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no input files (usage: kws -lib kws.so FILE.npy...)")
	}
	var names []string
	if *labels != "" {
		names = strings.Split(*labels, ",")
	}
	var m *tn.Module
	var err error
	if *name != "" {
		m, err = tn.LoadModule(*lib, *name)
	} else {
		m, err = tn.LoadModule(*lib)
	}
	if err != nil {
		if errors.Is(err, tn.ErrLoad) || errors.Is(err, tn.ErrNotModel) {
			return fmt.Errorf("%w\n(build the library with: tvmnode compile kws_ref_model.tflite "+
				"--name kws -o out/ --shared kws.so)", err)
		}
		return err
	}
	defer m.Close()
	if len(m.Inputs()) != 1 || len(m.Outputs()) != 1 {
		return fmt.Errorf("model '%s' has %d inputs and %d outputs; this classifier takes one of each",
			m.Name(), len(m.Inputs()), len(m.Outputs()))
	}
	for _, file := range fs.Args() {
		class, scores, err := classify(m, file)
		if err != nil {
			return err
		}
		label := ""
		if class < len(names) {
			label = " (" + names[class] + ")"
		}
		parts := make([]string, len(scores))
		for i, s := range scores {
			parts[i] = fmt.Sprintf("%.3f", s)
		}
		fmt.Fprintf(out, "%s: class %d%s, score %.3f; scores [%s]\n", file, class, label,
			scores[class], strings.Join(parts, " "))
	}
	return nil
}

// classify runs the model on one file: the class index and every score.
func classify(m *tn.Module, file string) (int, []float64, error) {
	in := m.Inputs()[0]
	a, err := npy.ReadFile(file)
	if err != nil {
		return 0, nil, err
	}
	data, err := inputFor(in, a)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := m.SetInput(in.Name, data); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := m.Run(); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", file, err)
	}
	t, err := m.Output(0)
	if err != nil {
		return 0, nil, err
	}
	defer t.Close() // the views below read the Module's buffer through t
	info := m.Outputs()[0]
	var scores []float64
	switch info.DType {
	case tn.Int8:
		q, err := t.Int8s()
		if err != nil {
			return 0, nil, err
		}
		for _, v := range q {
			scores = append(scores, dequantize(float64(v), info))
		}
	case tn.Float32:
		f, err := t.Float32s()
		if err != nil {
			return 0, nil, err
		}
		for _, v := range f {
			scores = append(scores, float64(v))
		}
	default:
		return 0, nil, fmt.Errorf("output '%s' is %s; this classifier reads int8 or float32", info.Name, info.DType)
	}
	best := 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
	}
	return best, scores, nil
}

func dequantize(q float64, info tn.TensorInfo) float64 {
	if info.Scale == 0 {
		return q
	}
	return info.Scale * (q - float64(info.ZeroPoint))
}

// inputFor is the file's array as the input takes it: the same element
// type, or float32 features quantized for an int8 input.
func inputFor(in tn.TensorInfo, a npy.Array) (interface{}, error) {
	n := int64(1)
	for _, d := range a.Shape {
		n *= d
	}
	if n != in.NumElements() {
		return nil, fmt.Errorf("the array has shape %v (%d elements); input '%s' takes %v (%d)",
			a.Shape, n, in.Name, in.Shape, in.NumElements())
	}
	switch d := a.Data.(type) {
	case []int8:
		if in.DType == tn.Int8 {
			return d, nil
		}
	case []float32:
		switch in.DType {
		case tn.Float32:
			return d, nil
		case tn.Int8:
			if in.Scale == 0 {
				return nil, fmt.Errorf("input '%s' is int8 without a scale: give int8 features", in.Name)
			}
			q := make([]int8, len(d))
			for i, v := range d {
				x := math.Round(float64(v)/in.Scale) + float64(in.ZeroPoint)
				if math.IsNaN(x) {
					return nil, fmt.Errorf("element %d is NaN", i)
				}
				q[i] = int8(math.Max(-128, math.Min(127, x)))
			}
			return q, nil
		}
	}
	return nil, fmt.Errorf("the array is %T; input '%s' is %s (give %s, or float32 features to quantize)",
		a.Data, in.Name, in.DType, in.DType)
}
