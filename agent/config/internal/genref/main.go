// Command genref writes the configuration reference
// (docs/configuration.md) from the settings table: go generate runs it in
// agent/config with the file's path.
package main

import (
	"fmt"
	"os"

	"github.com/lanleader/lanleader/agent/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genref FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(config.Reference()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
