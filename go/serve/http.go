package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"

	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The REST form of the protocol (KServe v2 / Open Inference Protocol
// HTTP/JSON), with the binary tensor data extension: a request whose
// "Inference-Header-Content-Length" header is N holds N bytes of JSON and
// then the inputs that have a "binary_data_size" parameter, in order; an
// output asked for with "binary_data": true (or all of them with the
// request parameter "binary_data_output": true) comes back the same way.

const headerLength = "Inference-Header-Content-Length"

type jsonInput struct {
	Name       string                     `json:"name"`
	Shape      []int64                    `json:"shape"`
	Datatype   string                     `json:"datatype"`
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
	Data       json.RawMessage            `json:"data,omitempty"`
}

type jsonRequestedOutput struct {
	Name       string                     `json:"name"`
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
}

type jsonRequest struct {
	ID         string                     `json:"id,omitempty"`
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
	Inputs     []jsonInput                `json:"inputs"`
	Outputs    []jsonRequestedOutput      `json:"outputs,omitempty"`
}

type jsonOutput struct {
	Name       string                 `json:"name"`
	Shape      []int64                `json:"shape"`
	Datatype   string                 `json:"datatype"`
	Parameters map[string]interface{} `json:"parameters,omitempty"`
	Data       interface{}            `json:"data,omitempty"`
}

type jsonResponse struct {
	ModelName    string                 `json:"model_name"`
	ModelVersion string                 `json:"model_version,omitempty"`
	ID           string                 `json:"id,omitempty"`
	Parameters   map[string]interface{} `json:"parameters,omitempty"`
	Outputs      []jsonOutput           `json:"outputs"`
}

type jsonTensorMeta struct {
	Name       string                 `json:"name"`
	Datatype   string                 `json:"datatype"`
	Shape      []int64                `json:"shape"`
	Parameters map[string]interface{} `json:"parameters,omitempty"`
}

// httpCode maps a gRPC status code to the HTTP status the REST form answers.
func httpCode(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.NotFound:
		return http.StatusNotFound
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.Canceled:
		return http.StatusRequestTimeout
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// tooLarge is a request over the size limit: RESOURCE_EXHAUSTED, which
// HTTP answers 413.
type tooLarge struct{ st *status.Status }

func (e tooLarge) Error() string              { return e.st.Message() }
func (e tooLarge) GRPCStatus() *status.Status { return e.st }

func writeError(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	code := httpCode(st.Code())
	var big tooLarge
	if errors.As(err, &big) {
		code = http.StatusRequestEntityTooLarge
	}
	writeJSON(w, code, map[string]string{"error": st.Message()})
}

// Handler is the REST form of the protocol under /v2/... and the
// Prometheus metrics under /metrics, behind the token check.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/health/live", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]bool{"live": true})
	})
	mux.HandleFunc("GET /v2/health/ready", func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusOK
		if !s.Ready() {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, map[string]bool{"ready": s.Ready()})
	})
	mux.HandleFunc("GET /v2", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]interface{}{"name": "tvmnode-serve", "version": Version,
			"extensions": extensions})
	})
	for _, prefix := range []string{"/v2/models/{name}", "/v2/models/{name}/versions/{version}"} {
		mux.HandleFunc("GET "+prefix, s.httpMetadata)
		mux.HandleFunc("GET "+prefix+"/ready", s.httpModelReady)
		mux.HandleFunc("POST "+prefix+"/infer", s.httpInfer)
	}
	mux.Handle("GET /metrics", s.metrics.handler())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.checkToken(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, status.Error(codes.Unauthenticated,
				"a bearer token is required: header 'Authorization: Bearer TOKEN' with the server's token"))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) httpModelReady(w http.ResponseWriter, r *http.Request) {
	_, err := s.lookup(r.PathValue("name"), r.PathValue("version"))
	if err != nil {
		writeError(w, err)
		return
	}
	code := http.StatusOK
	if !s.Ready() {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]bool{"ready": s.Ready()})
}

func jsonMeta(ts []tensorMeta) []jsonTensorMeta {
	out := make([]jsonTensorMeta, len(ts))
	for i, t := range ts {
		out[i] = jsonTensorMeta{Name: t.Name, Datatype: t.datatype, Shape: append([]int64(nil), t.Shape...)}
		if t.Scale != 0 {
			out[i].Parameters = map[string]interface{}{"scale": t.Scale, "zero_point": t.ZeroPoint}
		}
	}
	return out
}

func (s *Server) httpMetadata(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookup(r.PathValue("name"), r.PathValue("version"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]interface{}{"name": m.name, "versions": []string{"1"},
		"platform": platform, "inputs": jsonMeta(m.ins), "outputs": jsonMeta(m.outs)})
}

// jsonInt reads an integer parameter of a JSON request.
func jsonInt(params map[string]json.RawMessage, name string) (int64, error) {
	raw, ok := params[name]
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return 0, status.Errorf(codes.InvalidArgument, "parameter '%s' must be an integer, got %s", name, raw)
	}
	return v, nil
}

func jsonBool(params map[string]json.RawMessage, name string) bool {
	raw, ok := params[name]
	return ok && string(bytes.TrimSpace(raw)) == "true"
}

func (s *Server) httpInfer(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	name := r.PathValue("name")
	err := s.httpInferBody(w, r, name)
	s.observe(name, "http", start, err)
	if err != nil {
		writeError(w, err)
	}
}

// httpInferBody answers an infer request, or returns the error to answer.
func (s *Server) httpInferBody(w http.ResponseWriter, r *http.Request, name string) error {
	bad := func(format string, args ...interface{}) error {
		return status.Errorf(codes.InvalidArgument, "model '%s': "+format, append([]interface{}{name}, args...)...)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.cfg.MaxRequestBytes)))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return tooLarge{status.Newf(codes.ResourceExhausted, "the request is larger than the "+
				"server's limit of %d bytes (--max-request-bytes)", s.cfg.MaxRequestBytes)}
		}
		return status.Errorf(codes.Canceled, "reading the request: %v", err)
	}
	head, rest := body, []byte(nil)
	if h := r.Header.Get(headerLength); h != "" {
		n, err := strconv.Atoi(h)
		if err != nil || n < 0 || n > len(body) {
			return bad("header %s is %q: expected a length within the body's %d bytes", headerLength, h,
				len(body))
		}
		head, rest = body[:n], body[n:]
	}
	var jr jsonRequest
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&jr); err != nil {
		return bad("the request is not the protocol's JSON: %v", err)
	}
	req := &Request{Model: name, Version: r.PathValue("version"), ID: jr.ID}
	if req.Repeat, err = jsonInt(jr.Parameters, "repeat"); err != nil {
		return err
	}
	if req.Number, err = jsonInt(jr.Parameters, "number"); err != nil {
		return err
	}
	if req.MinRepeatMs, err = jsonInt(jr.Parameters, "min_repeat_ms"); err != nil {
		return err
	}
	for _, in := range jr.Inputs {
		x := Input{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape}
		if _, ok := in.Parameters["binary_data_size"]; ok {
			n, err := jsonInt(in.Parameters, "binary_data_size")
			if err != nil {
				return err
			}
			if n < 0 || n > int64(len(rest)) {
				return bad("input '%s': binary_data_size %d, but %d bytes of binary data are left", in.Name,
					n, len(rest))
			}
			x.Data, rest = rest[:n], rest[n:]
		} else if x.Data, err = jsonBytes(in.Data, in.Datatype); err != nil {
			return bad("input '%s': %v", in.Name, err)
		}
		req.Inputs = append(req.Inputs, x)
	}
	if len(rest) != 0 {
		return bad("%d bytes of binary data follow the inputs' binary_data_size", len(rest))
	}
	allBinary := jsonBool(jr.Parameters, "binary_data_output")
	binary := map[string]bool{}
	for _, o := range jr.Outputs {
		req.Outputs = append(req.Outputs, o.Name)
		if _, ok := o.Parameters["binary_data"]; ok {
			binary[o.Name] = jsonBool(o.Parameters, "binary_data")
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	res, err := s.Infer(ctx, req)
	if err != nil {
		return err
	}
	resp := jsonResponse{ModelName: name, ModelVersion: "1", ID: jr.ID}
	if res.RepeatSeconds != nil {
		resp.Parameters = map[string]interface{}{"repeat_seconds": formatSeconds(res.RepeatSeconds),
			"number": res.Number}
		if res.RepeatInstructions != nil {
			resp.Parameters["repeat_instructions"] = formatCounts(res.RepeatInstructions)
		}
		if res.RepeatCycles != nil {
			resp.Parameters["repeat_cycles"] = formatCounts(res.RepeatCycles)
		}
	}
	var blobs [][]byte
	for _, o := range res.Outputs {
		out := jsonOutput{Name: o.Name, Shape: o.Shape, Datatype: o.Datatype}
		isBinary, set := binary[o.Name]
		if !set {
			isBinary = allBinary
		}
		if isBinary {
			out.Parameters = map[string]interface{}{"binary_data_size": len(o.Data)}
			blobs = append(blobs, o.Data)
		} else {
			out.Data = jsonValues(o.Data, o.Datatype)
		}
		resp.Outputs = append(resp.Outputs, out)
	}
	js, err := json.Marshal(resp)
	if err != nil {
		return status.Errorf(codes.Internal, "encoding the response: %v", err)
	}
	if len(blobs) == 0 {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(js)
		return nil
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(headerLength, strconv.Itoa(len(js)))
	n := len(js)
	for _, b := range blobs {
		n += len(b)
	}
	w.Header().Set("Content-Length", strconv.Itoa(n))
	_, _ = w.Write(js)
	for _, b := range blobs {
		_, _ = w.Write(b)
	}
	return nil
}

// ServeHTTP serves the REST form on l until Shutdown (which drains it),
// with TLS when tlsConfig is not nil.
func (s *Server) ServeHTTP(l net.Listener, tlsConfig *tls.Config) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		MaxHeaderBytes: 64 << 10, IdleTimeout: 120 * time.Second}
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
	}
	if !s.onShutdown(srv.Shutdown) {
		l.Close()
		return nil // shut down before it began
	}
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
