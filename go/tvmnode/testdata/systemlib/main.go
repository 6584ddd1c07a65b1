// Command systemlib runs a model linked into the program as the system
// library. It is not built here: TestSystemModuleOfALinkedModel
// (module_test.go) copies it into a module of its own together with a
// compiled model's C sources (the archive's codegen/host/src and
// runtime/src beside this file, its headers in include/), which cgo
// compiles with -DTVMGEN_SYSTEM_LIB: the generated code then registers the
// model from a constructor before main runs, and SystemModule finds it by
// name.
//
//	systemlib NAME INPUT...
//
// opens model NAME with SystemModule and prints its description, then for
// each INPUT file (the bytes of every input, in order, back to back) runs
// the model and writes the bytes of every output to INPUT.out. It then
// prints the error SystemModule gives for a model that is not linked in,
// and how many tvmnode objects are left alive once everything is closed.
package main

// #cgo CFLAGS: -DTVMGEN_SYSTEM_LIB -I${SRCDIR}/include
// #cgo LDFLAGS: -lm
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"

	tn "tvmnode.dev/go/tvmnode"
	tnt "tvmnode.dev/go/tvmnode/tvmnodetest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "systemlib:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: systemlib NAME INPUT...")
	}
	before := tnt.Settle(-1)
	if err := runModel(args[0], args[1:], w); err != nil {
		return err
	}
	if err := unknownModel(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "left alive: %d\n", tnt.Settle(before)-before)
	return nil
}

// runModel runs model name of the system library on each input file.
func runModel(name string, inputs []string, w io.Writer) error {
	m, err := tn.SystemModule(name)
	if err != nil {
		return err
	}
	defer m.Close()
	fmt.Fprintf(w, "info: %+v\n", m.Info())
	fmt.Fprintf(w, "inputs: %+v\n", m.Inputs())
	fmt.Fprintf(w, "outputs: %+v\n", m.Outputs())
	for _, path := range inputs {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, in := range m.Inputs() {
			if data, err = setInput(m, in, data); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if len(data) != 0 {
			return fmt.Errorf("%s: %d bytes more than the inputs take", path, len(data))
		}
		if err := m.Run(); err != nil {
			return err
		}
		var out []byte
		for i := range m.Outputs() {
			t, err := m.Output(i)
			if err != nil {
				return err
			}
			b, err := t.Bytes()
			out = append(out, b...) // a copy: the view dies with the tensor
			t.Close()
			if err != nil {
				return err
			}
		}
		if err := os.WriteFile(path+".out", out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// setInput sets input in from the first bytes of data and returns the rest.
func setInput(m *tn.Module, in tn.TensorInfo, data []byte) ([]byte, error) {
	t, err := tn.NewTensor(in.Shape, in.DType)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	if len(data) < len(b) {
		return nil, fmt.Errorf("input '%s' takes %d bytes, %d left", in.Name, len(b), len(data))
	}
	copy(b, data)
	return data[len(b):], m.SetInputTensor(in.Name, t)
}

// unknownModel prints the error for a model the program does not hold,
// which names the models it does.
func unknownModel(w io.Writer) error {
	_, err := tn.SystemModule("no_such_model")
	if !errors.Is(err, tn.ErrName) || !errors.Is(err, tn.KeyError) {
		return fmt.Errorf("SystemModule(\"no_such_model\"): got %v, want an ErrName (KeyError)", err)
	}
	fmt.Fprintf(w, "unknown: %v\n", err)
	return nil
}
