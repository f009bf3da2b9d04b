package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// agentAnswer is an agent's answer to askAgent.
type agentAnswer struct {
	*http.Response        // its body read and closed: see body
	body           []byte // at most the limit given to askAgent
	readErr        error  // reading body failed: for the caller to judge beside the status
}

// askAgent sends req to an agent's HTTP server within timeout and returns
// the answer with its body, of which it reads at most limit bytes. The
// agent is on this host or this LAN: the request never goes through an
// HTTP_PROXY from the environment. Its error is one line that names the
// URL: the agent could not be reached.
func askAgent(req *http.Request, timeout time.Duration, limit int64) (agentAnswer, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: timeout}).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the method and URL
		}
		return agentAnswer{}, fmt.Errorf("cannot reach the agent at %s: %v (is the agent running? is --http right?)", req.URL, err)
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, limit))
	return agentAnswer{resp, body, readErr}, nil
}

// getAgent is askAgent of a GET of rawURL.
func getAgent(rawURL string, timeout time.Duration, limit int64) (agentAnswer, error) {
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return agentAnswer{}, err
	}
	return askAgent(req, timeout, limit)
}
