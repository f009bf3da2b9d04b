//go:build !linux

// Command idle measures the RSS and CPU of one idle lanleader agent. It
// reads /proc, so it runs on Linux only; see main.go.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "idle: Linux only (reads /proc/PID/status and /proc/PID/stat)")
	os.Exit(2)
}
