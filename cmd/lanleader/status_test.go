package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
)

// statusServer serves body with code at GET /status, and 404 elsewhere.
// It returns the listener's host:port.
func statusServer(t *testing.T, code int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// refusingAddr is a loopback address where nothing listens, for as long
// as the test runs: a TCP socket bound to it but not listening, so a
// connection is refused and no other server of the test process can be
// given the port (a server closed at once could be: a later
// httptest.NewServer may draw the same port).
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

func statusRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runStatus(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Three members: this node (host-a), the largest key, leads; host-c and
// host-b have the same priority (the larger node_id sorts first); host-b
// says nothing of its status but that it is not alive.
const status3 = `{"name":"host-a","node_id":3,"priority":150,"state":"leader","term":7,
 "leader_id":3,"leader_name":"host-a","algorithm":"bully",
 "members":[
  {"name":"host-b","node_id":2,"priority":100,"addr":"192.0.2.12:7946","alive":false},
  {"name":"host-c","node_id":5,"priority":100,"addr":"192.0.2.13:7946","alive":true,"election_addr":"192.0.2.13:7947","status":"alive"}],
 "cluster":"lanleader","transport":"multicast","gossip_addr":"192.0.2.11:7946",
 "election_addr":"192.0.2.11:7947","leader_since":"2025-01-02T03:04:05.678Z","version":"dev"}`

const table3 = `node     host-a (node_id 3, priority 150)
state    leader, term 7
leader   host-a (node_id 3) since 2025-01-02T03:04:05.678Z
cluster  lanleader, transport multicast, algorithm bully

NAME    NODE_ID  PRIORITY  ADDR             STATUS         LEADER
host-a  3        150       192.0.2.11:7946  leader (self)  *
host-c  5        100       192.0.2.13:7946  alive
host-b  2        100       192.0.2.12:7946  dead
`

func TestStatusTable(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"three members", status3, table3},
		{
			"a witness, a candidate and an observer",
			`{"name":"host-w","node_id":9,"priority":100,"state":"follower","term":4,"role":"witness",
			  "leader_id":1,"leader_name":"host-a","algorithm":"bully","quorum":3,"voted_term":4,
			  "members":[
			   {"name":"host-a","node_id":1,"priority":100,"addr":"198.18.0.1:7946","alive":true,"status":"alive","role":"candidate"},
			   {"name":"host-o","node_id":7,"priority":100,"addr":"198.18.0.7:7946","alive":true,"status":"alive","role":"observer"}],
			  "cluster":"lab","transport":"multicast","gossip_addr":"198.18.0.9:7946","version":"dev"}`,
			`node     host-w (node_id 9, priority 100)
state    follower, term 4
leader   host-a (node_id 1)
role     witness: votes in quorum mode, never leads
cluster  lab, transport multicast, algorithm bully
quorum   3 (a leader needs 2), voted term 4

NAME    NODE_ID  PRIORITY  ADDR             STATUS                    LEADER
host-w  9        100       198.18.0.9:7946  follower (self), witness
host-o  7        100       198.18.0.7:7946  alive, observer
host-a  1        100       198.18.0.1:7946  alive                     *
`,
		},
		{
			"no leader known",
			`{"name":"host-b","node_id":2,"priority":100,"state":"candidate","term":7,
			  "leader_id":0,"leader_name":"","algorithm":"bully",
			  "members":[
			   {"name":"host-a","node_id":3,"priority":100,"addr":"198.18.0.1:7946","alive":false,"status":"suspect"},
			   {"name":"host-c","node_id":1,"priority":200,"addr":"198.18.0.3:7946","alive":true}],
			  "cluster":"lab","transport":"unicast","gossip_addr":"198.18.0.2:7946","version":"dev"}`,
			`node     host-b (node_id 2, priority 100)
state    candidate, term 7
leader   none known
cluster  lab, transport unicast, algorithm bully

NAME    NODE_ID  PRIORITY  ADDR             STATUS            LEADER
host-c  1        200       198.18.0.3:7946  alive
host-a  3        100       198.18.0.1:7946  suspect
host-b  2        100       198.18.0.2:7946  candidate (self)
`,
		},
		{
			// Quorum mode, on the minority side of a partition.
			"quorum mode, no leader",
			`{"name":"host-b","node_id":2,"priority":100,"state":"follower","term":9,
			  "leader_id":0,"leader_name":"","algorithm":"bully","members":[],
			  "cluster":"lab","transport":"multicast","gossip_addr":"198.18.0.2:7946",
			  "quorum":5,"voted_term":9,"version":"dev"}`,
			`node     host-b (node_id 2, priority 100)
state    follower, term 9
leader   none known
cluster  lab, transport multicast, algorithm bully
quorum   5 (a leader needs 3), voted term 9

NAME    NODE_ID  PRIORITY  ADDR             STATUS           LEADER
host-b  2        100       198.18.0.2:7946  follower (self)
`,
		},
		{
			// Virtual addresses: on the leader, and on a follower whose
			// link is down.
			"virtual addresses",
			`{"name":"host-b","node_id":2,"priority":100,"state":"follower","term":9,
			  "leader_id":0,"leader_name":"","algorithm":"bully","members":[],
			  "cluster":"lab","transport":"multicast","gossip_addr":"198.18.0.2:7946",
			  "vips":[{"address":"198.18.0.100/24","dev":"eth0","up":false},{"address":"198.18.0.101/24","dev":"eth1","up":true}],
			  "links_down":["eth1"],"version":"dev"}`,
			`node        host-b (node_id 2, priority 100)
state       follower, term 9
leader      none known
cluster     lab, transport multicast, algorithm bully
vip         198.18.0.100/24 dev eth0, not on this host
vip         198.18.0.101/24 dev eth1, up on this host
links down  eth1: this node takes no part in elections until they are up

NAME    NODE_ID  PRIORITY  ADDR             STATUS           LEADER
host-b  2        100       198.18.0.2:7946  follower (self)
`,
		},
		{
			// Checks (one a fault, failed), a track file present, the
			// fault's reasons.
			"checks and track files",
			`{"name":"host-b","node_id":2,"priority":50,"state":"follower","term":9,
			  "leader_id":0,"leader_name":"","algorithm":"bully","members":[],
			  "cluster":"lab","transport":"multicast","gossip_addr":"198.18.0.2:7946",
			  "checks":[{"name":"web","command":"curl -fs x","state":"ok","ok":true,"weight":50,"rise":1,"fall":3,"passes":0,"failures":2,"detail":"exit status 7"},
			   {"name":"db","command":"pg_isready","state":"failed","ok":false,"fault":true,"weight":0,"rise":2,"fall":1,"passes":1,"failures":0,"detail":"timed out after 1s"}],
			  "track_files":[{"path":"/etc/lanleader/maintenance","present":true},{"path":"/run/x","present":false}],
			  "fault":["a check of weight 0 fails (db)","a track file is present (/etc/lanleader/maintenance)"],"version":"dev"}`,
			`node        host-b (node_id 2, priority 50)
state       follower, term 9
leader      none known
cluster     lab, transport multicast, algorithm bully
check       web: ok (weight 50, 2 of 3 failures to fall): exit status 7
check       db: failed (fault, 1 of 2 passes to rise): timed out after 1s
track file  /etc/lanleader/maintenance: present
track file  /run/x: absent
fault       a check of weight 0 fails (db); a track file is present (/etc/lanleader/maintenance): this node takes no part in elections

NAME    NODE_ID  PRIORITY  ADDR             STATUS           LEADER
host-b  2        50        198.18.0.2:7946  follower (self)
`,
		},
		{
			"node_id conflict",
			`{"name":"host-a","node_id":3,"priority":100,"state":"conflict","term":4,
			  "leader_id":0,"leader_name":"","algorithm":"bully",
			  "members":[
			   {"name":"host-b","node_id":2,"priority":100,"addr":"198.18.0.2:7946","alive":true,"status":"alive"},
			   {"name":"host-d","node_id":3,"priority":100,"addr":"198.18.0.4:7946","alive":true,"status":"alive"}],
			  "cluster":"lanleader","transport":"multicast","gossip_addr":"198.18.0.1:7946",
			  "conflict":["host-d"],"version":"dev"}`,
			`node      host-a (node_id 3, priority 100)
state     conflict, term 4
leader    none known
cluster   lanleader, transport multicast, algorithm bully
conflict  host-d: the same node_id 3 (or name) as this node, which does not lead until every node_id and name is unique

NAME    NODE_ID  PRIORITY  ADDR             STATUS           LEADER
host-a  3        100       198.18.0.1:7946  conflict (self)
host-d  3        100       198.18.0.4:7946  alive
host-b  2        100       198.18.0.2:7946  alive
`,
		},
		{
			// The leader's name comes from its member entry when
			// leader_name is empty; a lone node with no cluster fields
			// (an older agent) has no cluster line.
			"leader name from members, no cluster fields",
			`{"name":"host-b","node_id":2,"priority":90,"state":"follower","term":12,
			  "leader_id":9,"leader_name":"","algorithm":"",
			  "members":[{"name":"host-z","node_id":9,"priority":90,"addr":"198.18.0.9:7946","alive":true,"status":"alive"}]}`,
			`node    host-b (node_id 2, priority 90)
state   follower, term 12
leader  host-z (node_id 9)

NAME    NODE_ID  PRIORITY  ADDR             STATUS           LEADER
host-z  9        90        198.18.0.9:7946  alive            *
host-b  2        90        -                follower (self)
`,
		},
		{
			"unknown fields are ignored",
			`{"name":"host-a","node_id":3,"priority":100,"state":"leader","term":1,"leader_id":3,
			  "leader_name":"host-a","algorithm":"ring","members":[],"lease":{"size":3,"acks":[2,5]},
			  "cluster":"c","transport":"multicast","gossip_addr":"198.18.0.1:7946","future_field":true}`,
			`node     host-a (node_id 3, priority 100)
state    leader, term 1
leader   host-a (node_id 3)
cluster  c, transport multicast, algorithm ring

NAME    NODE_ID  PRIORITY  ADDR             STATUS         LEADER
host-a  3        100       198.18.0.1:7946  leader (self)  *
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := statusServer(t, http.StatusOK, tc.body)
			code, out, errs := statusRun("--http", addr)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if out != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out, tc.want)
			}
		})
	}
}

// --http takes host:port or a URL of the listener, with or without a
// trailing slash; all print the same.
func TestStatusHTTPForms(t *testing.T) {
	addr := statusServer(t, http.StatusOK, status3)
	for _, flagAddr := range []string{addr, "http://" + addr, "http://" + addr + "/"} {
		for _, args := range [][]string{{"--http", flagAddr}, {"-http=" + flagAddr}} {
			code, out, errs := statusRun(args...)
			if code != 0 || errs != "" || out != table3 {
				t.Errorf("%q: exit %d, stderr %q, output:\n%s", args, code, errs, out)
			}
		}
	}
}

func TestStatusJSON(t *testing.T) {
	body := `{"name":"host-a","node_id":3,"priority":100,"state":"leader","term":7,"leader_id":3,` +
		`"leader_name":"host-a","algorithm":"bully","members":[{"name":"host-b","node_id":2,` +
		`"priority":100,"addr":"198.18.0.2:7946","alive":true}],"new_field":{"x":[1,2]}}` + "\n"
	want := `{
  "name": "host-a",
  "node_id": 3,
  "priority": 100,
  "state": "leader",
  "term": 7,
  "leader_id": 3,
  "leader_name": "host-a",
  "algorithm": "bully",
  "members": [
    {
      "name": "host-b",
      "node_id": 2,
      "priority": 100,
      "addr": "198.18.0.2:7946",
      "alive": true
    }
  ],
  "new_field": {
    "x": [
      1,
      2
    ]
  }
}
`
	addr := statusServer(t, http.StatusOK, body)
	code, out, errs := statusRun("--json", "--http", addr)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// Failures: exit 1, nothing on stdout, one line on stderr.
func TestStatusAgentErrors(t *testing.T) {
	closedAddr := refusingAddr(t)

	for _, tc := range []struct {
		name string
		addr string
		want []string // substrings of stderr, the first its prefix
	}{
		{"unreachable", closedAddr, []string{
			"lanleader status: cannot reach the agent at http://" + closedAddr + "/status: ",
			"connection refused",
			"(is the agent running? is --http right?)",
		}},
		{"500", statusServer(t, http.StatusInternalServerError, "boom\nmore"), []string{
			"lanleader status: the agent at http://",
			"/status answered 500 Internal Server Error: boom\n",
		}},
		{"503 empty", statusServer(t, http.StatusServiceUnavailable, ""), []string{
			"lanleader status: the agent at http://",
			"/status answered 503 Service Unavailable\n",
		}},
		{"garbage", statusServer(t, http.StatusOK, "<html>hello</html>"), []string{
			"lanleader status: the agent at http://",
			`/status sent bad JSON: not an object: "<html>hello</html>"`,
		}},
		{"truncated JSON", statusServer(t, http.StatusOK, `{"name":"host-a","state":"lea`), []string{
			"lanleader status: the agent at http://",
			"/status sent bad JSON: unexpected end of JSON input",
		}},
		{"wrong type", statusServer(t, http.StatusOK, `{"name":"host-a","state":"leader","node_id":"three"}`), []string{
			"lanleader status: the agent at http://",
			"/status sent bad JSON: json: cannot unmarshal string into Go struct field Status.node_id of type uint64",
		}},
		{"not a status document", statusServer(t, http.StatusOK, `{"hello":"world"}`), []string{
			"lanleader status: the agent at http://",
			`/status sent JSON without "state": not a /status document`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				args := []string{"--http", tc.addr}
				if asJSON {
					args = append(args, "--json")
				}
				code, out, errs := statusRun(args...)
				if code != 1 || out != "" {
					t.Fatalf("%q: exit %d, stdout %q; want 1 and nothing", args, code, out)
				}
				if !strings.HasPrefix(errs, tc.want[0]) || strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") {
					t.Errorf("%q: stderr %q; want one line starting %q", args, errs, tc.want[0])
				}
				for _, w := range tc.want[1:] {
					if !strings.Contains(errs, w) {
						t.Errorf("%q: stderr %q lacks %q", args, errs, w)
					}
				}
			}
		})
	}
}

func TestStatusTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	code, out, errs := statusRun("--http", srv.URL, "--timeout", "100ms")
	want := "lanleader status: cannot reach the agent at " + srv.URL + "/status: "
	if code != 1 || out != "" || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "Client.Timeout exceeded") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and %q…Client.Timeout exceeded", code, out, errs, want)
	}
}

func TestStatusUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "lanleader status: flag provided but not defined: -bogus (see lanleader status --help)\n"},
		{[]string{"extra"}, "lanleader status: unexpected argument \"extra\" (see lanleader status --help)\n"},
		{[]string{"--json", "extra", "--timeout", "1s"}, "lanleader status: unexpected argument \"extra\" (see lanleader status --help)\n"},
		{[]string{"--timeout", "soon"}, "lanleader status: invalid value \"soon\" for flag -timeout: parse error (see lanleader status --help)\n"},
		{[]string{"--timeout", "0s"}, "lanleader status: --timeout 0s: want a positive duration such as 2s\n"},
		{[]string{"--http"}, "lanleader status: flag needs an argument: -http (see lanleader status --help)\n"},
		{[]string{"--http", ""}, "lanleader status: --http \"\": empty address; want host:port or http://host:port\n"},
		{[]string{"--http", "127.0.0.1"}, "lanleader status: --http \"127.0.0.1\": no port; want host:port or http://host:port\n"},
		{[]string{"--http", "ftp://127.0.0.1:9947"}, "lanleader status: --http \"ftp://127.0.0.1:9947\": scheme \"ftp\"; want host:port or http://host:port\n"},
		{[]string{"--http", "http://127.0.0.1:9947/metrics"}, "lanleader status: --http \"http://127.0.0.1:9947/metrics\": want host:port or http://host:port\n"},
	} {
		code, out, errs := statusRun(tc.args...)
		if code != 2 || out != "" || errs != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

func TestStatusHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		code, out, errs := statusRun(arg)
		if code != 0 || out != statusUsage || errs != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout:\n%s", arg, code, errs, out)
		}
	}
	for _, w := range []string{"--http ADDR", "(default 127.0.0.1:9947)", "--json", "--timeout D", "(default 2s)", "Exit status:"} {
		if !strings.Contains(statusUsage, w) {
			t.Errorf("statusUsage lacks %q", w)
		}
	}
}

// The example in statusUsage is what status3 prints.
func TestStatusUsageExample(t *testing.T) {
	var want strings.Builder
	want.WriteString("Example:\n  $ lanleader status\n")
	for _, l := range strings.SplitAfter(table3, "\n") {
		if strings.TrimSpace(l) != "" {
			want.WriteString("  ")
		}
		want.WriteString(l)
	}
	if !strings.HasSuffix(statusUsage, want.String()) {
		t.Errorf("statusUsage does not end with\n%s", want.String())
	}
}
