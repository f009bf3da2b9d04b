package agent

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newHTTPServer serves /status, /healthz and /metrics. Everything is
// read-only and reads the loop's latest snapshot, never the machine.
// Request sizes and slow clients are bounded.
func (a *Agent) newHTTPServer() *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		s := a.Status()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.Encode(&s)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		s := a.Status()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		// The agent answers, so it is healthy; a node_id conflict is a
		// configuration error that an orchestrator should see.
		if s.State == "conflict" {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "conflict: node_id %d is also used by %v\n", s.NodeID, s.Conflict)
			return
		}
		fmt.Fprintf(w, "ok %s term %d leader %d\n", s.State, s.Term, s.LeaderID)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{
		Registry:            a.reg,
		ErrorLog:            log.New(&slogWriter{l: a.log.With("component", "http")}, "", 0),
		MaxRequestsInFlight: 4,
		Timeout:             5 * time.Second,
	}))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "lanleader: /status (JSON), /healthz, /metrics\n")
	})
	return &http.Server{
		Handler:           http.MaxBytesHandler(mux, 4<<10),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
		ErrorLog:          log.New(&slogWriter{l: a.log.With("component", "http")}, "", 0),
	}
}
