// Package release makes what a platform team installs: static binaries
// packed as archives with SHA-256 checksums, a krew manifest carrying
// those checksums, ndfq's own image as one OCI image index for every
// linux architecture, and the probe Job with that image by digest, so
// what runs in a cluster is exactly what was released. It also pushes
// the image to any registry and reads it back by digest.
package release
