// Command ndfq-runc is a Docker runtime that wraps runc on hosts whose
// capability bounding set is smaller than the kernel's (some VMs lack
// CAP_SYS_RESOURCE). It drops the capabilities the host cannot grant from
// the spec of `create`/`run --bundle` and `exec --process`, then runs runc.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ndfq/ndfq/clusters/dockerhost"
)

func main() {
	if err := run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "ndfq-runc:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	runc, err := realRunc()
	if err != nil {
		return err
	}
	missing, err := dockerhost.MissingBoundingCaps()
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		if file, isBundle := specFile(args[1:]); file != "" {
			if err := rewrite(file, isBundle, missing); err != nil {
				return err
			}
		}
	}
	return syscall.Exec(runc, append([]string{"runc"}, args[1:]...), os.Environ())
}

// globalWithValue are runc's global flags that take a separate value.
var globalWithValue = map[string]bool{"root": true, "log": true, "log-format": true, "criu": true, "rootless": true}

// specFile finds the spec the subcommand will read: the bundle's
// config.json for create and run, the --process file for exec.
func specFile(args []string) (string, bool) {
	sub := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if sub == "" {
			if !strings.HasPrefix(a, "-") {
				sub = a
			} else if globalWithValue[strings.TrimLeft(a, "-")] {
				i++ // skip the flag's value
			}
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		switch {
		case (sub == "create" || sub == "run") && (name == "bundle" || name == "b"):
			return filepath.Join(value, "config.json"), true
		case sub == "exec" && (name == "process" || name == "p"):
			return value, false
		}
	}
	if sub == "create" || sub == "run" {
		return "config.json", true // runc's default bundle is the working folder
	}
	return "", false
}

func rewrite(file string, isBundle bool, drop []string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, changed, err := dockerhost.RewriteSpec(data, isBundle, drop)
	if err != nil || !changed {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}

// realRunc is the first runc on PATH that is not this wrapper.
func realRunc() (string, error) {
	self, _ := os.Executable()
	for _, dir := range filepath.SplitList(os.Getenv("PATH") + ":/usr/sbin:/usr/bin:/sbin") {
		p := filepath.Join(dir, "runc")
		if p, err := exec.LookPath(p); err == nil {
			if rp, _ := filepath.EvalSymlinks(p); rp != self && p != self {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("no runc on PATH")
}
