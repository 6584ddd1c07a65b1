package serve

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (several servers in one process keep theirs apart).
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	queue    *prometheus.GaugeVec
	inflight *prometheus.GaugeVec
	// restarts of an emulated board, by model and reason (exited,
	// timeout, link, start_failed)
	restarts *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tvmnode_serve_requests_total",
			Help: "Inference requests answered, by model, protocol (grpc, http) and status code.",
		}, []string{"model", "protocol", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tvmnode_serve_request_duration_seconds",
			Help: "Time from receiving an inference request to answering it, by model and protocol.",
			Buckets: []float64{50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3,
				0.1, 0.2, 0.5, 1, 2, 5, 10},
		}, []string{"model", "protocol"}),
		queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tvmnode_serve_queue_depth",
			Help: "Requests waiting for an instance of the model.",
		}, []string{"model"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tvmnode_serve_inflight",
			Help: "Requests running on an instance of the model.",
		}, []string{"model"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tvmnode_serve_device_restarts_total",
			Help: "Emulated boards started again, by model and reason: exited (qemu ended), timeout (no " +
				"answer in --device-timeout), link (the session failed), start_failed (a start that did not " +
				"come up, tried again).",
		}, []string{"model", "reason"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.queue, m.inflight, m.restarts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
