package serve

import (
	"context"
	"crypto/subtle"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	pb "tvmnode.dev/go/serve/inference"
)

// grpcService implements the protocol's GRPCInferenceService.
type grpcService struct {
	pb.UnimplementedGRPCInferenceServiceServer
	s *Server
}

// checkToken checks an "authorization" value against the token.
func (s *Server) checkToken(auth string) bool {
	if s.cfg.Token == "" {
		return true
	}
	const prefix = "Bearer "
	if len(auth) < len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(auth[len(prefix):]), []byte(s.cfg.Token)) == 1
}

func (s *Server) authInterceptor(ctx context.Context, req interface{}, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (interface{}, error) {
	if s.cfg.Token != "" {
		md, _ := metadata.FromIncomingContext(ctx)
		auth := md.Get("authorization")
		if len(auth) != 1 || !s.checkToken(auth[0]) {
			return nil, status.Error(codes.Unauthenticated,
				"a bearer token is required: metadata 'authorization: Bearer TOKEN' with the server's token")
		}
	}
	return handler(ctx, req)
}

// NewGRPCServer makes a grpc.Server serving the protocol (and the token
// check, the size limit); opts add to it (e.g. grpc.Creds for TLS).
func (s *Server) NewGRPCServer(creds credentials.TransportCredentials) *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(s.cfg.MaxRequestBytes),
		grpc.ChainUnaryInterceptor(s.authInterceptor),
	}
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	g := grpc.NewServer(opts...)
	pb.RegisterGRPCInferenceServiceServer(g, &grpcService{s: s})
	return g
}

// ServeGRPC serves gRPC on l until Shutdown (which drains it), TLS when
// creds is not nil.
func (s *Server) ServeGRPC(l net.Listener, creds credentials.TransportCredentials) error {
	g := s.NewGRPCServer(creds)
	if !s.onShutdown(func(ctx context.Context) error {
		done := make(chan struct{})
		go func() { g.GracefulStop(); close(done) }()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			g.Stop()
			<-done
			return ctx.Err()
		}
	}) {
		l.Close()
		return nil // shut down before it began
	}
	err := g.Serve(l)
	if err == grpc.ErrServerStopped {
		return nil
	}
	return err
}

func (g *grpcService) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: true}, nil
}

func (g *grpcService) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	return &pb.ServerReadyResponse{Ready: g.s.Ready()}, nil
}

func (g *grpcService) ModelReady(_ context.Context, r *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	_, err := g.s.lookup(r.GetName(), r.GetVersion())
	return &pb.ModelReadyResponse{Ready: err == nil && g.s.Ready()}, nil
}

func (g *grpcService) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	return &pb.ServerMetadataResponse{Name: "tvmnode-serve", Version: Version, Extensions: extensions}, nil
}

// extensions are the protocol extensions the server has.
var extensions = []string{"binary_tensor_data"}

func tensorMetadata(ts []tensorMeta) []*pb.ModelMetadataResponse_TensorMetadata {
	out := make([]*pb.ModelMetadataResponse_TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = &pb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.datatype,
			Shape: append([]int64(nil), t.Shape...)}
		if t.Scale != 0 {
			out[i].Parameters = map[string]*pb.InferParameter{
				"scale":      {ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: t.Scale}},
				"zero_point": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(t.ZeroPoint)}},
			}
		}
	}
	return out
}

func (g *grpcService) ModelMetadata(_ context.Context, r *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	m, err := g.s.lookup(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, err
	}
	return &pb.ModelMetadataResponse{Name: m.name, Versions: []string{"1"}, Platform: platform,
		Inputs: tensorMetadata(m.ins), Outputs: tensorMetadata(m.outs)}, nil
}

// platform names the kind of model in ModelMetadata.
const platform = "tvmnode_module"

// intParam reads an integer parameter (int64, uint64, or a decimal string).
func intParam(params map[string]*pb.InferParameter, name string) (int64, error) {
	p, ok := params[name]
	if !ok {
		return 0, nil
	}
	switch v := p.GetParameterChoice().(type) {
	case *pb.InferParameter_Int64Param:
		return v.Int64Param, nil
	case *pb.InferParameter_Uint64Param:
		if v.Uint64Param > 1<<62 {
			return 0, status.Errorf(codes.InvalidArgument, "parameter '%s' is too large: %d", name, v.Uint64Param)
		}
		return int64(v.Uint64Param), nil
	}
	return 0, status.Errorf(codes.InvalidArgument, "parameter '%s' must be an int64_param, got %T", name,
		p.GetParameterChoice())
}

// timingParams reads repeat, number and min_repeat_ms.
func timingParams(r *Request, params map[string]*pb.InferParameter) error {
	var err error
	if r.Repeat, err = intParam(params, "repeat"); err != nil {
		return err
	}
	if r.Number, err = intParam(params, "number"); err != nil {
		return err
	}
	r.MinRepeatMs, err = intParam(params, "min_repeat_ms")
	return err
}

func (g *grpcService) ModelInfer(ctx context.Context, in *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	start := time.Now()
	res, err := g.modelInfer(ctx, in)
	g.s.observe(in.GetModelName(), "grpc", start, err)
	return res, err
}

func (g *grpcService) modelInfer(ctx context.Context, in *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	r := &Request{Model: in.GetModelName(), Version: in.GetModelVersion(), ID: in.GetId()}
	if err := timingParams(r, in.GetParameters()); err != nil {
		return nil, err
	}
	raw := in.GetRawInputContents()
	if len(raw) != 0 && len(raw) != len(in.GetInputs()) {
		return nil, status.Errorf(codes.InvalidArgument,
			"model '%s': raw_input_contents has %d entries for %d inputs (one per input, or none)", r.Model,
			len(raw), len(in.GetInputs()))
	}
	for k, t := range in.GetInputs() {
		x := Input{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: t.GetShape()}
		switch {
		case len(raw) != 0:
			if t.GetContents() != nil {
				return nil, status.Errorf(codes.InvalidArgument,
					"model '%s': input '%s' has both contents and raw_input_contents", r.Model, x.Name)
			}
			x.Data = raw[k]
		default:
			data, err := contentsBytes(t.GetContents(), x.Datatype)
			if err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "model '%s': input '%s': %v", r.Model, x.Name, err)
			}
			x.Data = data
		}
		r.Inputs = append(r.Inputs, x)
	}
	for _, o := range in.GetOutputs() {
		r.Outputs = append(r.Outputs, o.GetName())
	}
	res, err := g.s.Infer(ctx, r)
	if err != nil {
		return nil, err
	}
	out := &pb.ModelInferResponse{ModelName: r.Model, ModelVersion: "1", Id: r.ID}
	for _, o := range res.Outputs {
		out.Outputs = append(out.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: o.Name,
			Datatype: o.Datatype, Shape: o.Shape})
		out.RawOutputContents = append(out.RawOutputContents, o.Data)
	}
	if res.RepeatSeconds != nil {
		out.Parameters = map[string]*pb.InferParameter{
			"repeat_seconds": {ParameterChoice: &pb.InferParameter_StringParam{
				StringParam: formatSeconds(res.RepeatSeconds)}},
			"number": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: res.Number}},
		}
		if res.RepeatInstructions != nil {
			out.Parameters["repeat_instructions"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{
				StringParam: formatCounts(res.RepeatInstructions)}}
		}
		if res.RepeatCycles != nil {
			out.Parameters["repeat_cycles"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{
				StringParam: formatCounts(res.RepeatCycles)}}
		}
	}
	return out, nil
}

// observe counts a request and its latency.
func (s *Server) observe(model, protocol string, start time.Time, err error) {
	if _, ok := s.models[model]; !ok {
		model = "" // unknown names do not make new series
	}
	s.metrics.requests.WithLabelValues(model, protocol, status.Code(err).String()).Inc()
	s.metrics.latency.WithLabelValues(model, protocol).Observe(time.Since(start).Seconds())
}
