package release

import (
	"fmt"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// Homepage is the project's address; release URLs hang under it.
const Homepage = "https://github.com/ndfq/ndfq"

// DownloadURL is where the release workflow attaches an archive.
func DownloadURL(version string, p Platform) string {
	return fmt.Sprintf("%s/releases/download/%s/%s", Homepage, version, ArchiveName(version, p))
}

type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string         `json:"version"`
		Homepage         string         `json:"homepage"`
		ShortDescription string         `json:"shortDescription"`
		Description      string         `json:"description"`
		Platforms        []krewPlatform `json:"platforms"`
	} `json:"spec"`
}

type krewPlatform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
}

// KrewManifest is the `kubectl krew install --manifest` file of a release,
// carrying each archive's checksum (read from dist).
func KrewManifest(dist, version string) ([]byte, error) {
	var k krewPlugin
	k.APIVersion, k.Kind = "krew.googlecontainertools.github.com/v1alpha2", "Plugin"
	k.Metadata.Name = "ndfq"
	k.Spec.Version, k.Spec.Homepage = version, Homepage
	k.Spec.ShortDescription = "Qualify Node Declared Features (KEP-5328) before a rollout"
	k.Spec.Description = "`kubectl ndfq probe` checks that every kubelet's declared features are what its\n" +
		"version, gates and runtime must declare, that the scheduler refuses pods on nodes\n" +
		"lacking a feature and the admission plugin rejects updates they cannot honour,\n" +
		"and says GO, HOLD or INCOMPLETE with reasons.\n"
	for _, p := range Platforms {
		sum, err := FileSHA256(filepath.Join(dist, ArchiveName(version, p)))
		if err != nil {
			return nil, err
		}
		kp := krewPlatform{URI: DownloadURL(version, p), SHA256: sum, Bin: "ndfq"}
		kp.Selector.MatchLabels = map[string]string{"os": p.OS, "arch": p.Arch}
		k.Spec.Platforms = append(k.Spec.Platforms, kp)
	}
	return yaml.Marshal(k)
}
