// Command modelplane-cmpclient is a test client for a running Argo CD
// config-management-plugin sidecar (argocd-cmp-server). It talks to the
// server over its unix socket exactly the way Argo CD's repo-server does
// (reposerver/repository/repository.go and util/app/discovery/discovery.go
// at argo-cd v3.2.11): it calls CheckPluginConfiguration, then streams the
// repository directory as a tar.gz with util/cmp.SendRepoStream to either
// MatchRepository or GenerateManifest. The env entries given with -env are
// sent in the stream's metadata, as the repo-server sends ARGOCD_APP_* and
// ARGOCD_ENV_* variables.
//
// It is built against the real argo-cd module by tests/peers/build-argocd.sh
// into bin/modelplane-cmpclient-v<argocd version>.
//
// Usage:
//
//	modelplane-cmpclient -socket PATH -repo ABS_DIR -app-path REL_PATH [-env NAME=VALUE ...] match|generate|apptype|named
//
// Or, without a plugin server:
//
//	modelplane-cmpclient appset -server URL -token TOKEN -namespace NS -file APPSET.yaml
//
// prints, as a JSON array, the Applications that Argo CD's ApplicationSet controller (its own
// applicationset/controllers/template.GenerateApplications, with its real cluster generator)
// makes of the ApplicationSet for the cluster secrets that the API server at URL holds in NS.
//
// match prints {"isSupported":bool,"isDiscoveryEnabled":bool} on stdout.
// apptype prints {"appType":"Plugin"|"Kustomize"|"Helm"|"Directory"}: what the repo-server's own
// discovery.AppType decides for an Application with no kustomize/helm/plugin block, asking every
// plugin socket in the -socket file's directory first.
// named prints {"uses":bool}: whether the repo-server's discovery.DetectConfigManagementPlugin hands
// an Application that names this plugin (the -socket file's base name, without .sock) to it.
// generate prints a JSON array of the manifest strings on stdout; on error it
// prints the error text (the gRPC error as the repo-server receives it) on
// stderr and exits 1. Usage errors exit 2.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	grpc_retry "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	log "github.com/sirupsen/logrus"
	"google.golang.org/protobuf/types/known/emptypb"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	pluginclient "github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	argov1alpha1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/app/discovery"
	"github.com/argoproj/argo-cd/v3/util/cmp"
)

type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}

type matchResult struct {
	IsSupported        bool `json:"isSupported"`
	IsDiscoveryEnabled bool `json:"isDiscoveryEnabled"`
}

func usage(fs *flag.FlagSet) {
	fmt.Fprintf(fs.Output(), "usage: %s -socket PATH -repo ABS_DIR -app-path REL_PATH [-env NAME=VALUE ...] [-exclude GLOB ...] [-timeout DUR] match|generate|apptype|named\n", filepath.Base(os.Args[0]))
	fs.PrintDefaults()
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "appset" {
		return runAppset(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("modelplane-cmpclient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "path of the plugin's unix socket (e.g. <ARGOCD_PLUGINSOCKFILEPATH>/<name>-<version>.sock)")
	repo := fs.String("repo", "", "absolute path of the repository root directory that is tarred and streamed")
	appPath := fs.String("app-path", ".", "application path relative to -repo (the Application's spec.source.path)")
	timeout := fs.Duration("timeout", 5*time.Minute, "overall deadline for the RPCs")
	var envs, excludes multiFlag
	fs.Var(&envs, "env", "NAME=VALUE env entry sent in the request metadata (repeatable)")
	fs.Var(&excludes, "exclude", "tar exclusion glob, like the repo-server's ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS (repeatable)")
	fs.Usage = func() { usage(fs) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	verbs := map[string]bool{"match": true, "generate": true, "apptype": true, "named": true}
	if fs.NArg() != 1 || !verbs[fs.Arg(0)] {
		usage(fs)
		return 2
	}
	if *socket == "" || *repo == "" {
		fmt.Fprintln(stderr, "modelplane-cmpclient: -socket and -repo are required")
		return 2
	}
	if !filepath.IsAbs(*repo) {
		fmt.Fprintln(stderr, "modelplane-cmpclient: -repo must be an absolute path")
		return 2
	}
	if filepath.IsAbs(*appPath) {
		fmt.Fprintln(stderr, "modelplane-cmpclient: -app-path must be relative to -repo")
		return 2
	}
	for _, e := range envs {
		if !strings.Contains(e, "=") {
			fmt.Fprintf(stderr, "modelplane-cmpclient: -env %q is not NAME=VALUE\n", e)
			return 2
		}
	}
	repoRoot := filepath.Clean(*repo)
	// The repo-server passes the absolute app path and the repo root;
	// SendRepoStream derives AppName (base name) and AppRelPath from them.
	absAppPath := filepath.Join(repoRoot, *appPath)

	// Keep the library's logrus output (connection errors etc.) on stderr,
	// away from the JSON on stdout.
	log.SetOutput(stderr)

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	conn, client, err := pluginclient.NewConfigManagementPluginClientSet(*socket).NewConfigManagementPluginClient()
	if err != nil {
		fmt.Fprintf(stderr, "error dialing to cmp-server %s: %v\n", *socket, err)
		return 1
	}
	defer conn.Close()

	// Both discovery (cmpSupports) and manifest generation
	// (runConfigManagementPluginSidecars) start with this call.
	if _, err := client.CheckPluginConfiguration(ctx, &emptypb.Empty{}); err != nil {
		fmt.Fprintf(stderr, "error calling cmp-server checkPluginConfiguration: %v\n", err)
		return 1
	}

	// The repo-server's own decisions: they find the plugin by its socket, as the repo-server does.
	switch fs.Arg(0) {
	case "apptype":
		os.Setenv("ARGOCD_PLUGINSOCKFILEPATH", filepath.Dir(*socket))
		appType, err := discovery.AppType(ctx, absAppPath, repoRoot, nil, excludes, envs)
		if err != nil {
			fmt.Fprintf(stderr, "discovery.AppType: %v\n", err)
			return 1
		}
		return writeJSON(stdout, stderr, map[string]string{"appType": appType})
	case "named":
		os.Setenv("ARGOCD_PLUGINSOCKFILEPATH", filepath.Dir(*socket))
		name := strings.TrimSuffix(filepath.Base(*socket), ".sock")
		closer, _, err := discovery.DetectConfigManagementPlugin(ctx, absAppPath, repoRoot, name, envs, excludes)
		if err == nil {
			closer.Close()
		}
		return writeJSON(stdout, stderr, map[string]bool{"uses": err == nil})
	}

	switch fs.Arg(0) {
	case "match":
		// discovery.matchRepositoryCMP
		stream, err := client.MatchRepository(ctx, grpc_retry.Disable())
		if err != nil {
			fmt.Fprintf(stderr, "error getting stream client: %v\n", err)
			return 1
		}
		if err := cmp.SendRepoStream(ctx, absAppPath, repoRoot, stream, envs, excludes); err != nil {
			fmt.Fprintf(stderr, "error sending stream: %v\n", err)
			return 1
		}
		resp, err := stream.CloseAndRecv()
		if err != nil {
			fmt.Fprintf(stderr, "error receiving stream response: %v\n", err)
			return 1
		}
		return writeJSON(stdout, stderr, matchResult{
			IsSupported:        resp.GetIsSupported(),
			IsDiscoveryEnabled: resp.GetIsDiscoveryEnabled(),
		})
	default: // generate
		// repository.generateManifestsCMP
		stream, err := client.GenerateManifest(ctx, grpc_retry.Disable())
		if err != nil {
			fmt.Fprintf(stderr, "error getting generateManifestStream: %v\n", err)
			return 1
		}
		if err := cmp.SendRepoStream(stream.Context(), absAppPath, repoRoot, stream, envs, excludes); err != nil {
			fmt.Fprintf(stderr, "error sending file to cmp-server: %v\n", err)
			return 1
		}
		resp, err := stream.CloseAndRecv()
		if err != nil {
			// Verbatim gRPC error, e.g.
			// "rpc error: code = Unknown desc = error generating manifests: ..."
			fmt.Fprintln(stderr, err.Error())
			return 1
		}
		manifests := resp.GetManifests()
		if manifests == nil {
			manifests = []string{}
		}
		return writeJSON(stdout, stderr, manifests)
	}
}

func writeJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		if !errors.Is(err, io.ErrClosedPipe) {
			fmt.Fprintf(stderr, "error writing output: %v\n", err)
		}
		return 1
	}
	return 0
}

// runAppset generates an ApplicationSet's Applications as the ApplicationSet controller does, from
// the cluster secrets of a real API server.
func runAppset(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("modelplane-cmpclient appset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "the API server's URL")
	token := fs.String("token", "", "a bearer token for it")
	namespace := fs.String("namespace", "argocd", "the Argo CD namespace, where the cluster secrets are")
	file := fs.String("file", "", "the ApplicationSet, as YAML")
	if err := fs.Parse(args); err != nil || *server == "" || *file == "" {
		fmt.Fprintln(stderr, "usage: modelplane-cmpclient appset -server URL -token TOKEN -namespace NS -file APPSET.yaml")
		return 2
	}
	log.SetOutput(stderr)
	data, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintf(stderr, "error reading %s: %v\n", *file, err)
		return 1
	}
	var appSet argov1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict(data, &appSet); err != nil {
		fmt.Fprintf(stderr, "error reading the ApplicationSet: %v\n", err)
		return 1
	}
	config := &rest.Config{Host: *server, BearerToken: *token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := argov1alpha1.AddToScheme(scheme); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	c, err := ctrlclient.New(config, ctrlclient.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(stderr, "error making a client: %v\n", err)
		return 1
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(stderr, "error making a clientset: %v\n", err)
		return 1
	}
	ctx := context.Background()
	gens := map[string]generators.Generator{"Clusters": generators.NewClusterGenerator(ctx, c, clientset, *namespace)}
	apps, reason, err := template.GenerateApplications(log.WithField("applicationset", appSet.Name), appSet, gens, &utils.Render{}, c)
	if err != nil {
		fmt.Fprintf(stderr, "error generating applications (%s): %v\n", reason, err)
		return 1
	}
	if apps == nil {
		apps = []argov1alpha1.Application{}
	}
	return writeJSON(stdout, stderr, apps)
}
