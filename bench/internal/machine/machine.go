// Package machine says where benchmark figures were taken, so that
// figures from different machines can be told apart.
package machine

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Info describes this machine.
type Info struct {
	CPUs      int    `json:"cpus"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUModel  string `json:"cpu_model,omitempty"`
	GoVersion string `json:"go_version"`
}

// This returns the Info of the machine the program runs on.
func This() Info {
	return Info{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUModel: cpuModel(), GoVersion: runtime.Version()}
}

// Line is the one-line form benchmarks print in their header.
func (m Info) Line() string {
	model := m.CPUModel
	if model == "" {
		model = "CPU model unknown"
	}
	return fmt.Sprintf("machine: %d CPUs, %s/%s, %s, %s", m.CPUs, m.OS, m.Arch, model, m.GoVersion)
}

// cpuModel is the first "model name" of /proc/cpuinfo, "" when there is
// none (not Linux, or an architecture that does not name it).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
