package dockerhost

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ndfq/ndfq/internal/progress"
)

// inotifyFloors are kind's known-issue minimums ("Pod errors due to too
// many open files"): every kubelet and its cAdvisor take inotify
// instances, and the host default of 128 ran out at ten kind nodes here
// (kubelet: "inotify_init: too many open files", kubeadm init timed out).
var inotifyFloors = map[string]int{
	"fs/inotify/max_user_instances": 512,
	"fs/inotify/max_user_watches":   524288,
}

// raiseSysctls lifts each setting under root (/proc/sys) to its floor,
// never lowering one, and says what it changed.
func raiseSysctls(root string, floors map[string]int, log *progress.Logger) error {
	for key, floor := range floors {
		path := filepath.Join(root, key)
		raw, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("sysctl %s: %w", key, err)
		}
		cur, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil {
			return fmt.Errorf("sysctl %s: %q is not a number", key, raw)
		}
		if cur >= floor {
			continue
		}
		if err := os.WriteFile(path, []byte(strconv.Itoa(floor)), 0o644); err != nil {
			return fmt.Errorf("sysctl %s: raise %d to %d: %w", key, cur, floor, err)
		}
		log.Printf("host: raised %s from %d to %d (kind's known issue: too many open files)", strings.ReplaceAll(key, "/", "."), cur, floor)
	}
	return nil
}
