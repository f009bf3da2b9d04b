package agent

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/lanleader/lanleader"

// TestDependencyRule: the packages below agent/ never import the agent
// (the driver lends them what they need: a part gets a part.Host), and a
// part imports neither the agent nor another part: only package part,
// the settings (agent/config), the agent's libraries (agent/internal/*,
// which hold no agent either), the module's leaf packages and the
// standard library. ARCHITECTURE.md
// states the rule.
func TestDependencyRule(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || filepath.Dir(path) == "." {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == module+"/agent" {
				t.Errorf("%s imports the agent: a package below agent/ is given what it needs, never the agent", path)
			}
			if partOf(dir) != "" && strings.HasPrefix(p, module+"/agent/") {
				if other := partOf(strings.TrimPrefix(p, module+"/agent/")); p != module+"/agent/part" && p != module+"/agent/config" && !strings.HasPrefix(p, module+"/agent/internal/") && other != partOf(dir) && !(strings.HasSuffix(path, "_test.go") && other == "parttest") {
					t.Errorf("%s (part %s) imports %s: a part reaches the rest of the agent through its part.Host only", path, partOf(dir), p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no file below agent/ checked")
	}
}

// partOf is the part that the directory dir (relative to agent/) belongs
// to, "" when it is not under part/.
func partOf(dir string) string {
	rest, ok := strings.CutPrefix(dir, "part/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}
