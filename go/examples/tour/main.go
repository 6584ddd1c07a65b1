// The common path through the Go binding: call a C function, register a Go
// function that C (or Python, or Rust) can call, build IR, and run a Go pass
// in a pipeline beside the C passes.
//
//	cd go && go run ./examples/tour    (see go/README.md for the flags)
package main

import (
	"errors"
	"fmt"
	"log"
	"strings"

	tn "tvmnode.dev/go/tvmnode"
)

func main() {
	// A C function from the global registry.
	add, err := tn.GetGlobal("testing.add_i64")
	check(err)
	defer add.Release()
	sum, err := add.CallInt64(40, 2)
	check(err)
	fmt.Println("testing.add_i64(40, 2) =", sum)

	// A Go function, registered by name: any language can call it now.
	scale, err := tn.RegisterGlobal("tour.scale", func(x float64, by int) float64 {
		return x * float64(by)
	}, false)
	check(err)
	defer scale.Release()
	defer func() { check(tn.RemoveGlobal("tour.scale")) }()
	call, err := tn.GetGlobal("testing.call") // C calling the Go function
	check(err)
	defer call.Release()
	v, err := call.Call(scale, 1.5, 4)
	check(err)
	fmt.Println("C called tour.scale(1.5, 4) =", v)
	_, err = call.Call(scale, "x", 4)
	var te *tn.Error
	if errors.As(err, &te) && errors.Is(err, tn.TypeError) {
		fmt.Printf("as expected: %s: %s\n", te.Kind(), te.Message())
	}

	// IR: fn (%x: Tensor[(1, 8), float32]) { nn.relu(add(%x, 1f)) }
	x, err := tn.Var("x", []int64{1, 8}, tn.Float32)
	check(err)
	one, err := tn.Scalar(1, tn.Float32)
	check(err)
	sumExpr, err := tn.CallOp("add", []tn.Expr{x, one}, nil)
	check(err)
	relu, err := tn.CallOp("nn.relu", []tn.Expr{sumExpr}, nil)
	check(err)
	fn, err := tn.NewFunction([]tn.Expr{x}, relu)
	check(err)
	mod, err := tn.ModuleFromExpr(fn)
	check(err)

	// A Go pass (relu -> sigmoid), registered by name and run between C passes.
	pass, err := tn.FunctionPass("TourReluToSigmoid", 1, []string{"InferType"},
		func(f tn.Expr, _ tn.IRModule) (tn.Expr, error) {
			return tn.Mutate(f, func(_, e tn.Expr) (tn.Expr, error) {
				if e.OpName() != "nn.relu" {
					return e, nil
				}
				args, err := e.Args()
				if err != nil {
					return tn.Expr{}, err
				}
				return tn.CallOp("sigmoid", args, nil)
			})
		})
	check(err)
	defer pass.Release()
	check(pass.Register(false))
	defer func() { check(tn.UnregisterPass("TourReluToSigmoid")) }()
	seq, err := tn.SequentialNamed("tour", "InferType", "TourReluToSigmoid", "FoldConstant", "FuseOps")
	check(err)
	defer seq.Release()
	out, err := seq.Run(mod)
	check(err)
	text, err := tn.AsText(out, false)
	check(err)
	fmt.Println("after InferType, TourReluToSigmoid, FoldConstant, FuseOps:")
	fmt.Println(strings.TrimSpace(text))
	for _, o := range []tn.Handle{x, one, sumExpr, relu, fn, mod, out} {
		o.AsObject().Release()
	}
}

func check(err error) {
	if err != nil {
		var te *tn.Error
		if errors.As(err, &te) {
			log.Fatal(te.Format())
		}
		log.Fatal(err)
	}
}
