package main

import "testing"

func TestSpecFile(t *testing.T) {
	cases := []struct {
		args     []string
		file     string
		isBundle bool
	}{
		{[]string{"--root", "/run/x", "--log", "/l", "--log-format", "json", "--systemd-cgroup", "create", "--bundle", "/b", "--pid-file", "/p", "id"}, "/b/config.json", true},
		{[]string{"--root=/run/x", "create", "-b", "/b2", "id"}, "/b2/config.json", true},
		{[]string{"--root", "/run/x", "exec", "--process", "/tmp/p.json", "--detach", "id"}, "/tmp/p.json", false},
		{[]string{"exec", "-p=/tmp/q.json", "id"}, "/tmp/q.json", false},
		{[]string{"--root", "/run/x", "state", "id"}, "", false},
		{[]string{"run", "id"}, "config.json", true},
	}
	for _, c := range cases {
		file, isBundle := specFile(c.args)
		if file != c.file || isBundle != c.isBundle {
			t.Errorf("%v: got %q,%v want %q,%v", c.args, file, isBundle, c.file, c.isBundle)
		}
	}
}
