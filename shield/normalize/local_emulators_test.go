package normalize

import "testing"

// Local endpoints make cloud and storage CLIs local (local_emulators.go): the service effects of
// a command on a loopback endpoint are marked; any other endpoint, a dynamic one, an alias the
// call points elsewhere, or a file path is left alone.
func TestLocalEmulators(t *testing.T) {
	const lsk = "local-emulator:localhost:4566"
	runEffectCases(t, []effectCase{
		{name: "aws endpoint option", cmd: "aws --endpoint-url http://localhost:4566 s3 rb s3://test-bucket --force",
			want: []fx{{kind: "delete", target: "cloud:s3://test-bucket", remote: lsk}}},
		{name: "aws endpoint with =", cmd: "aws s3 rm s3://fixtures --recursive --endpoint-url=http://127.0.0.1:4566",
			want: []fx{{kind: "connect", target: "aws api", remote: "local-emulator:127.0.0.1:4566"}}},
		{name: "aws endpoint env", cmd: "AWS_ENDPOINT_URL=http://localhost:4566 aws s3 rb s3://t --force",
			want: []fx{{kind: "delete", target: "cloud:s3://t", remote: lsk}}},
		{name: "aws service endpoint env", cmd: "AWS_ENDPOINT_URL_S3=http://[::1]:9000 aws s3 rb s3://t --force",
			want: []fx{{kind: "delete", target: "cloud:s3://t", remote: "local-emulator:[::1]:9000"}}},
		{name: "mc default local alias", cmd: "mc rm --recursive --force local/test-uploads",
			want: []fx{{kind: "delete", target: "cloud", remote: "local-emulator:localhost:9000"}}},
		{name: "mc alias set to loopback in the call", cmd: "mc alias set dev http://127.0.0.1:9000 a b && mc rb --force dev/scratch",
			want: []fx{{kind: "delete", target: "cloud", remote: "local-emulator:localhost:9000"}}},
		{name: "azurite", cmd: "az storage container delete -n t --connection-string UseDevelopmentStorage=true",
			want: []fx{{kind: "operate", target: "storage container delete t", remote: "local-emulator:127.0.0.1"}, {kind: "delete", target: "cloud", detail: "az storage container delete", remote: "local-emulator:127.0.0.1"}}},
		// Not local.
		{name: "aws on its account", cmd: "aws s3 rb s3://test-bucket --force", want: []fx{{kind: "delete", target: "cloud:s3://test-bucket", remote: ""}}},
		{name: "aws on another host", cmd: "aws --endpoint-url https://s3.example.net s3 rb s3://b --force", want: []fx{{kind: "delete", target: "cloud:s3://b", remote: ""}}},
		{name: "aws on a private address", cmd: "AWS_ENDPOINT_URL=http://10.0.0.5:4566 aws s3 rb s3://b --force", want: []fx{{kind: "delete", target: "cloud:s3://b", remote: ""}}},
		{name: "aws on a dynamic endpoint", cmd: `aws --endpoint-url "$EP" s3 rb s3://b --force`, want: []fx{{kind: "delete", target: "cloud:s3://b", remote: ""}}},
		{name: "two endpoints", cmd: "aws --endpoint-url http://localhost:4566 --endpoint-url https://s3.amazonaws.com s3 rb s3://b --force", want: []fx{{kind: "delete", target: "cloud:s3://b", remote: ""}}},
		{name: "loopback lookalike host", cmd: "aws --endpoint-url http://localhost.evil.example s3 rb s3://b --force", want: []fx{{kind: "delete", target: "cloud:s3://b", remote: ""}}},
		{name: "mc alias pointed away", cmd: "mc alias set local https://s3.amazonaws.com a b && mc rm -r --force local/prod", want: []fx{{kind: "delete", target: "cloud", remote: ""}}},
		{name: "mc other alias", cmd: "mc rm -r --force prod/data", want: []fx{{kind: "delete", target: "cloud", remote: ""}}},
		{name: "mc mixed aliases", cmd: "mc rm -r --force local/a prod/b", want: []fx{{kind: "delete", target: "cloud", remote: ""}}},
		{name: "secret file upload keeps its path", cmd: "aws --endpoint-url http://localhost:4566 s3 cp ~/.aws/credentials s3://x/",
			want: []fx{{kind: "secret", target: "/home/user/.aws/credentials"}}},
	})
}

func FuzzEndpointHost(f *testing.F) {
	for _, s := range []string{"http://localhost:4566", "127.0.0.1:9000", "UseDevelopmentStorage=true",
		"DefaultEndpointsProtocol=http;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;", "https://s3.amazonaws.com",
		"http://[::1]:9000", "$EP", "http://localhost.evil.example", "BlobEndpoint=;QueueEndpoint=x", "::::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := endpointHost(s)
		if ok && h == "" {
			t.Fatalf("%q: loopback without a host", s)
		}
	})
}
