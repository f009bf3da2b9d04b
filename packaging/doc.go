// Package packaging builds lanleader's Debian package (deb.sh, with nfpm
// from the Go module proxy, described by nfpm.yaml) and tests it: the
// files it holds, its control fields and conffiles, the binary's version,
// the man page, and the systemd unit (systemd-analyze verify and its
// security exposure). It has no Go code of its own.
package packaging
