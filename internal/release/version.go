package release

import (
	"fmt"

	"golang.org/x/mod/semver"
)

// CheckVersion accepts a release version as tags name it: vMAJOR.MINOR.PATCH
// with an optional pre-release (v0.1.0, v0.2.0-rc.1), no build metadata.
func CheckVersion(v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "" {
		return fmt.Errorf("VERSION %q: want a semver tag such as v0.1.0 or v0.2.0-rc.1 (v, three numbers, an optional pre-release)", v)
	}
	return nil
}
