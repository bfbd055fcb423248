package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeFlags are kubectl's connection flags (--kubeconfig, --context, -n,
// --as, --request-timeout, ...) for the commands that talk to a cluster.
type kubeFlags struct {
	path      string
	overrides clientcmd.ConfigOverrides
	loader    clientcmd.ClientConfig
}

// bind adds the flags; nsHelp says what -n means to this command.
func (k *kubeFlags) bind(f *pflag.FlagSet, nsHelp string) {
	f.StringVar(&k.path, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	flags := clientcmd.RecommendedConfigOverrideFlags("")
	flags.Timeout.Default = "30s"
	flags.ContextOverrideFlags.Namespace.Description = nsHelp
	flags.AuthOverrideFlags.Impersonate.Description = "user to impersonate (check that config/rbac/ is enough)"
	clientcmd.BindOverrideFlags(&k.overrides, f, flags)
}

// check refuses malformed flags before anything connects.
func (k *kubeFlags) check() error {
	if n, err := strconv.Atoi(k.overrides.Timeout); err == nil && n >= 0 {
		// kubectl's plain seconds
	} else if d, err := time.ParseDuration(k.overrides.Timeout); err != nil || d < 0 {
		return fmt.Errorf("--request-timeout %q: want a duration such as 30s (0 for none)", k.overrides.Timeout)
	}
	if ns := k.overrides.Context.Namespace; ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("--namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.path
	k.loader = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &k.overrides)
	return nil
}

// config is the client configuration and the context's name.
func (k *kubeFlags) config() (*rest.Config, string, error) {
	cfg, err := k.loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	contextName := k.overrides.CurrentContext
	if raw, err := k.loader.RawConfig(); err == nil && contextName == "" {
		contextName = raw.CurrentContext
	}
	return cfg, contextName, nil
}

// clientset is a client of the cluster the flags name.
func (k *kubeFlags) clientset() (kubernetes.Interface, error) {
	cfg, _, err := k.config()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// namespace is -n, "" when not given.
func (k *kubeFlags) namespace() string { return k.overrides.Context.Namespace }
