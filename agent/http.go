package agent

import (
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lanleader/lanleader/agent/api"
	"github.com/lanleader/lanleader/agent/internal/auth"
	"github.com/lanleader/lanleader/agent/internal/gossip"
)

// LoadKeyFile reads a secret from a key file and checks the file (see
// auth.LoadKeyFile): what Config.Key and Config.AcceptKeys hold.
func LoadKeyFile(path string) ([]byte, error) { return auth.LoadKeyFile(path) }

// ResignToken is the token `lanleader resign` sends to an agent whose
// key is secret (see auth.ResignToken).
func ResignToken(secret []byte) string { return auth.ResignToken(secret) }

// newHTTPServer serves /status, /healthz, /leader and /metrics. Everything is
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
	// GET /leader: the leader gate of load balancers (serveLeader, below).
	mux.HandleFunc("GET /leader", a.serveLeader)
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{
		Registry:            a.reg,
		ErrorLog:            log.New(gossip.NewLogWriter(a.log.With("component", "http")), "", 0),
		MaxRequestsInFlight: 4,
		Timeout:             5 * time.Second,
	}))
	// POST /resign: `lanleader resign`. Only from this host (whatever
	// address --http listens on), and not from a web page: a browser's
	// cross-site POST carries an Origin header. With a key, only with the
	// token derived from it (ResignToken), so that only who can read the
	// key file can move the leadership.
	mux.HandleFunc("POST /resign", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !fromThisHost(r) || r.Header.Get("Origin") != "" {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(api.ResignAnswer{Error: "resign is accepted only from this host's loopback, and not from a web page"})
			return
		}
		if a.auth.keys != nil {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || !a.auth.keys.ResignAllowed(strings.TrimSpace(tok)) {
				w.WriteHeader(http.StatusUnauthorized)
				json.NewEncoder(w).Encode(api.ResignAnswer{Error: "this agent has a key: resign needs it (lanleader resign --key-file FILE)"})
				return
			}
		}
		led, term, holdOff := a.resign()
		s := a.Status()
		ans := api.ResignAnswer{Resigned: led, State: s.State, Term: s.Term, NodeID: s.NodeID,
			HoldOff: holdOff.String()}
		if led {
			// The term resigned, not the one that may follow it.
			ans.Term = term
		} else {
			ans.Error = "this node does not lead (state " + s.State + ")"
			w.WriteHeader(http.StatusConflict)
		}
		json.NewEncoder(w).Encode(ans)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "lanleader: /status (JSON), /healthz, /leader, /metrics; POST /resign (from this host)\n")
	})
	return &http.Server{
		Handler:           http.MaxBytesHandler(mux, 4<<10),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
		ErrorLog:          log.New(gossip.NewLogWriter(a.log.With("component", "http")), "", 0),
	}
}

// fromThisHost says whether a request comes from this host: from a
// loopback address, or from the very address it was sent to (a host
// connecting to one of its own addresses).
func fromThisHost(r *http.Request) bool {
	remote, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	if remote.Addr().Unmap().IsLoopback() {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	lap, err := netip.ParseAddrPort(local.String())
	return err == nil && lap.Addr().Unmap() == remote.Addr().Unmap()
}

// serveLeader is GET /leader. It reads the loop's latest snapshot, like
// /status: in quorum mode a leader is a leader only while it holds its
// lease.
func (a *Agent) serveLeader(w http.ResponseWriter, r *http.Request) {
	s := a.Status()
	ans := api.LeaderAnswer{Node: s.Name, NodeID: s.NodeID, Leader: s.State == "leader", State: s.State,
		Term: s.Term, LeaderID: s.LeaderID}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ans.Leader {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(&ans)
}
