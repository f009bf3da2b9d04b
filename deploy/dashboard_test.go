package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const dashboardFile = "grafana/lanleader.json"

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Query      any    `json:"query"`
			Datasource *dsRef `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Datasource *dsRef   `json:"datasource"`
	Targets    []target `json:"targets"`
}

type target struct {
	RefID        string `json:"refId"`
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
	Format       string `json:"format"`
	Datasource   *dsRef `json:"datasource"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// grafanaVars stands in for Grafana's variables when a query leaves the
// dashboard: a range of four 1 s scrapes, a one-minute dashboard range,
// the job the scrape test and the rules name.
var grafanaVars = strings.NewReplacer("$__rate_interval", "4s", "$__range", "1m", "$job", "lanleader")

// panelQuery is one PromQL target of the dashboard, Grafana variables
// substituted.
type panelQuery struct {
	panel, refID, expr string
}

func dashboardQueries(d dashboard) []panelQuery {
	var out []panelQuery
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, panelQuery{p.Title, tg.RefID, grafanaVars.Replace(tg.Expr)})
		}
	}
	return out
}

var (
	panelTypes  = []string{"stat", "timeseries", "state-timeline", "bargauge"}
	promDS      = dsRef{Type: "prometheus", UID: "${datasource}"}
	selectorRE  = regexp.MustCompile(`\b(lanleader_[a-z_]+|up)\b(.?)(job=~"\$job")?`)
	legendRE    = regexp.MustCompile(`\{\{ *([a-zA-Z_]+) *\}\}`)
	labelValsRE = regexp.MustCompile(`^label_values\((\w+), *(\w+)\)$`)
)

// TestDashboard: the Grafana dashboard is well formed (unique panel ids,
// panels inside the 24-column grid without overlapping, the Prometheus
// data source from the ${datasource} variable on every panel and target,
// unique refIds), every query selects only metrics and labels the agent
// exports and filters by the $job variable, and the panels the issue
// names are there.
func TestDashboard(t *testing.T) {
	d := readDashboard(t)
	if d.Title != "lanleader" || d.UID != "lanleader" || d.SchemaVersion < 36 {
		t.Errorf("title %q uid %q schemaVersion %d, want lanleader, lanleader, at least 36", d.Title, d.UID, d.SchemaVersion)
	}

	vars := map[string]string{}
	for _, v := range d.Templating.List {
		q, _ := v.Query.(string)
		vars[v.Name] = v.Type + " " + q
		if v.Type == "query" {
			if v.Datasource == nil || *v.Datasource != promDS {
				t.Errorf("variable %s: datasource %+v, want %+v", v.Name, v.Datasource, promDS)
			}
			m := labelValsRE.FindStringSubmatch(q)
			if m == nil {
				t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q)
				continue
			}
			if labels, ok := exported()[m[1]]; !ok || !slices.Contains(labels, m[2]) {
				t.Errorf("variable %s: the agent exports no %s with label %s", v.Name, m[1], m[2])
			}
		}
	}
	wantVars := map[string]string{"datasource": "datasource prometheus", "job": "query label_values(lanleader_build_info, job)"}
	if fmt.Sprint(vars) != fmt.Sprint(wantVars) {
		t.Errorf("variables %v, want %v", vars, wantVars)
	}

	if len(d.Panels) == 0 {
		t.Fatal("no panels")
	}
	ids := map[int]string{}
	for i, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 || ids[p.ID] != "" {
			t.Errorf("%s: id not positive or not unique (also %q)", where, ids[p.ID])
		}
		ids[p.ID] = p.Title
		if p.Title == "" || !slices.Contains(panelTypes, p.Type) {
			t.Errorf("%s: empty title or type %q not in %q", where, p.Type, panelTypes)
		}
		g := p.GridPos
		if g.W < 1 || g.H < 1 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("%s: gridPos %+v is outside the 24-column grid", where, g)
		}
		for _, q := range d.Panels[:i] {
			h := q.GridPos
			if g.X < h.X+h.W && h.X < g.X+g.W && g.Y < h.Y+h.H && h.Y < g.Y+g.H {
				t.Errorf("%s overlaps panel %d %q", where, q.ID, q.Title)
			}
		}
		if p.Datasource == nil || *p.Datasource != promDS {
			t.Errorf("%s: datasource %+v, want %+v", where, p.Datasource, promDS)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no targets", where)
		}
		refIDs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refIDs[tg.RefID] {
				t.Errorf("%s: refId %q empty or repeated", where, tg.RefID)
			}
			refIDs[tg.RefID] = true
			if tg.Datasource == nil || *tg.Datasource != promDS {
				t.Errorf("%s %s: datasource %+v, want %+v", where, tg.RefID, tg.Datasource, promDS)
			}
			for _, m := range selectorRE.FindAllStringSubmatch(tg.Expr, -1) {
				if m[2] != "{" || m[3] == "" {
					t.Errorf("%s %s: %s is not filtered by {job=~\"$job\"...}: %s", where, tg.RefID, m[1], tg.Expr)
				}
			}
			refs, errs := checkNames(grafanaVars.Replace(tg.Expr), false)
			for _, err := range errs {
				t.Errorf("%s %s: %v", where, tg.RefID, err)
			}
			var labels []string
			for _, m := range refs.metrics {
				labels = append(labels, exported()[m]...)
			}
			for _, m := range legendRE.FindAllStringSubmatch(tg.LegendFormat, -1) {
				if !slices.Contains(labels, m[1]) {
					t.Errorf("%s %s: legend {{%s}} is not a label of %v", where, tg.RefID, m[1], refs.metrics)
				}
			}
		}
	}

	// The panels of the issue: a panel of the given type (any if "") with
	// a query on the metric that contains the given text.
	for _, want := range []struct{ what, typ, metric, text string }{
		{"who leads over time", "state-timeline", "lanleader_is_leader", `lanleader_is_leader{job=~"$job"}`},
		{"term", "timeseries", "lanleader_term", `lanleader_term{`},
		{"leader changes", "timeseries", "lanleader_leader_changes_total", "increase(lanleader_leader_changes_total"},
		{"failover-time histogram", "bargauge", "lanleader_failover_seconds_bucket", "sum by (le) (increase(lanleader_failover_seconds_bucket"},
		{"messages sent by type", "timeseries", "lanleader_messages_sent_total", "sum by (type) (rate(lanleader_messages_sent_total"},
		{"messages received by type", "timeseries", "lanleader_messages_received_total", "sum by (type) (rate(lanleader_messages_received_total"},
		{"drops by reason", "timeseries", "lanleader_packets_dropped_total", "sum by (reason) (rate(lanleader_packets_dropped_total"},
		{"members alive", "timeseries", "lanleader_members", `status="alive"`},
	} {
		found := false
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				if (want.typ == "" || p.Type == want.typ) && strings.Contains(tg.Expr, want.metric) && strings.Contains(tg.Expr, want.text) {
					found = true
					if want.what == "failover-time histogram" && tg.Format != "heatmap" {
						t.Errorf("%s: panel %q has format %q, want heatmap (buckets in le order)", want.what, p.Title, tg.Format)
					}
				}
			}
		}
		if !found {
			t.Errorf("no %s panel: a %s panel querying %s with %q", want.what, want.typ, want.metric, want.text)
		}
	}
}

// TestDashboardQueriesParse: Prometheus's own parser (promtool check
// rules, on a file of one recording rule per query) accepts every query of
// the dashboard. The scrape test also runs each one against a live server.
func TestDashboardQueriesParse(t *testing.T) {
	promtool := needTool(t, "promtool")
	qs := dashboardQueries(readDashboard(t))
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range qs {
		e, _ := json.Marshal(q.expr) // a JSON string is a YAML string
		fmt.Fprintf(&b, "      - record: dashboard:query_%d\n        expr: %s\n", i, e)
	}
	path := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runTool(t, ".", nil, promtool, "check", "rules", path)
	if want := fmt.Sprintf("  SUCCESS: %d rules found\n", len(qs)); code != 0 || !strings.Contains(out, want) {
		t.Errorf("promtool check rules on the dashboard's %d queries: exit %d\n%s", len(qs), code, out)
	}
}
