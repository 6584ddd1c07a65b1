// Command client classifies one keyword-spotting input (a .npy of int8
// features, or zeros) on a running tvmnode-serve, over gRPC with the
// generated stubs:
//
//	go run ./examples/client -addr 127.0.0.1:8001 -model kws [x.npy]
//
// It reads the model's input from ModelMetadata, sends the bytes as
// raw_input_contents, prints the scores, then times the model on the
// server (parameters repeat and number) and prints the seconds per run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"tvmnode.dev/go/internal/npy"
	pb "tvmnode.dev/go/serve/inference"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8001", "the server's gRPC address")
	model := flag.String("model", "kws", "the model")
	token := flag.String("token", "", "bearer token, when the server has --token-file")
	flag.Parse()
	if err := run(*addr, *model, *token, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

func run(addr, model, token, file string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := pb.NewGRPCInferenceServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	md, err := client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: model})
	if err != nil {
		return err
	}
	in := md.Inputs[0]
	n := int64(1)
	for _, d := range in.Shape {
		n *= d
	}
	data := make([]byte, n) // an int8 input: one byte per element
	if file != "" {
		a, err := npy.ReadFile(file)
		if err != nil {
			return err
		}
		x, ok := a.Data.([]int8)
		if !ok || int64(len(x)) != n {
			return fmt.Errorf("%s: expected %d int8 values", file, n)
		}
		for i, v := range x {
			data[i] = byte(v)
		}
	}
	req := &pb.ModelInferRequest{
		ModelName:        model,
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape}},
		RawInputContents: [][]byte{data},
	}
	res, err := client.ModelInfer(ctx, req)
	if err != nil {
		return err // a status: codes.InvalidArgument says what is wrong
	}
	scores := res.RawOutputContents[0]
	best := 0
	for i := range scores {
		if int8(scores[i]) > int8(scores[best]) {
			best = i
		}
	}
	fmt.Printf("%s: class %d (scores %v)\n", res.Outputs[0].Name, best, scores)
	// Time the model on the server: 5 repeats of 20 runs after a warm-up.
	int64p := func(v int64) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
	}
	req.Parameters = map[string]*pb.InferParameter{"repeat": int64p(5), "number": int64p(20)}
	res, err = client.ModelInfer(ctx, req)
	if err != nil {
		return err
	}
	fmt.Println("seconds per run, per repeat:", res.Parameters["repeat_seconds"].GetStringParam())
	return nil
}
