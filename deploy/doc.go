// Package deploy holds what an operator deploys next to lanleader, and the
// tests that keep it true: the Prometheus alert rules
// (prometheus/lanleader.rules.yml) with their promtool unit tests
// (prometheus/lanleader.rules.test.yml), and the Grafana dashboard
// (grafana/lanleader.json).
//
// The tests check the rules with promtool (check rules, test rules, and
// that each alert's tests fail when its rule is changed), the dashboard's
// structure, and that every PromQL expression in either names only metrics
// and label values the agent exports (metrics.Describe and its label
// lists). One test runs a real Prometheus server (Debian's prometheus
// package) on loopback, scraping five `lanleader run` processes every
// second through a leader crash, and lints each agent's /metrics with
// `promtool check metrics`. Tests that need promtool or prometheus skip,
// naming the package, when it is not installed.
//
// The package has no code: it must not be imported, and its tests must
// address nothing outside 127.0.0.0/8.
package deploy
