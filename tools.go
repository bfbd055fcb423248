//go:build tools

// Package tools pins the command-line tools the Makefile builds into bin/
// from this go.mod, so nobody installs them by hand.
package tools

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
)
