"""A stand-in for one cloud provider's instance metadata service, run by test_cloud_metadata.py
inside a network namespace that holds the provider's link-local address.

    srv_cloud_metadata.py PROVIDER MODE

MODE "serve" answers as the provider does, checking what the provider checks (AWS: the IMDSv2
token from a PUT, 401 without it; GCP: Metadata-Flavor: Google; Azure: Metadata: True and the
api-version; Oracle: its bearer header; IBM: a token from a PUT, then sent as a bearer); "garbage" answers every request with 200 and a page that
is no metadata; "silent" accepts connections and never answers. Each request is printed as a JSON
line on stdout ({"method", "path", "headers", "status"}), after {"ready": true}.
"""
import http.server
import json
import socket
import sys
import threading

AWS_TOKEN = "AQAEAHtoken-of-the-stand-in=="
IBM_TOKEN = "eyJhbGciOiJSUzI1NiJ9.stand-in.token"

# The answers, by provider: path (with query) -> body. What test_cloud_metadata.py expects of
# node_cloud_info is next to them there.
DOCS = {
    "AWS": {
        "/latest/meta-data/instance-id": "i-0123456789abcdef0",
        "/latest/meta-data/instance-life-cycle": "spot",
        "/latest/meta-data/instance-type": "m5.large",
        "/latest/meta-data/placement/region": "eu-west-1",
        "/latest/meta-data/placement/availability-zone": "eu-west-1b",
        "/latest/meta-data/placement/availability-zone-id": "euw1-az2",
        "/latest/meta-data/local-ipv4": "10.0.1.23",
        # no public-ipv4: an instance without one gets 404 there
        "/latest/meta-data/identity-credentials/ec2/info": json.dumps({
            "Code": "Success", "LastUpdated": "2026-12-07T07:00:00Z", "AccountId": "123456789012"}),
    },
    "GCP": {
        "/computeMetadata/v1/project/project-id": "nodescope-test",
        "/computeMetadata/v1/instance/id": "4567890123456789012",
        "/computeMetadata/v1/instance/network-interfaces/0/ip": "10.128.0.5",
        "/computeMetadata/v1/instance/network-interfaces/0/access-configs/0/external-ip": "34.1.2.3",
        "/computeMetadata/v1/instance/scheduling/preemptible": "TRUE",
        "/computeMetadata/v1/instance/machine-type": "projects/123456/machineTypes/e2-standard-4",
        "/computeMetadata/v1/instance/zone": "projects/123456/zones/us-central1-a",
    },
    "Azure": {
        "/metadata/instance?api-version=2021-05-01&format=json": json.dumps({
            "compute": {"location": "westeurope", "vmId": "02aab8a4-74ef-476e-8182-f6d2ba4166a6",
                        "vmSize": "Standard_D2s_v3", "zone": "2",
                        "subscriptionId": "8d10da13-8125-4ba9-a717-bf7490507b3d",
                        "tags": "", "osProfile": {"adminUsername": "azureuser"}},
            "network": {"interface": [{"ipv4": {
                "ipAddress": [{"privateIpAddress": "10.1.0.4", "publicIpAddress": "20.1.2.3"}],
                "subnet": [{"address": "10.1.0.0", "prefix": "24"}]},
                "macAddress": "000D3AF806EC"}]}}),
    },
    "Hetzner": {
        "/hetzner/v1/metadata": "availability-zone: hel1-dc2\nhostname: node-7\n"
                                "instance-id: 42424242\npublic-ipv4: 95.216.1.2\nlocal-ipv4: ''\n"
                                "region: eu-central\npublic-keys: []\nvendor_data: \"#cloud-config\\n\"\n",
    },
    "DigitalOcean": {
        "/metadata/v1/id": "331234567",
        "/metadata/v1/region": "fra1",
    },
    "Alibaba": {
        "/latest/meta-data/instance-id": "i-bp67acfmxazb4ph3",
        "/latest/meta-data/region-id": "cn-hangzhou",
        "/latest/meta-data/zone-id": "cn-hangzhou-i",
        "/latest/meta-data/owner-account-id": "1234567890123456",
        "/latest/meta-data/instance/instance-type": "ecs.g7.large",
        "/latest/meta-data/private-ipv4": "172.16.0.10",
    },
    "Scaleway": {
        "/conf": "COMMERCIAL_TYPE=DEV1-S\nHOSTNAME=node-9\nID=5e2c1b9a-7f3d-4c51-9e8a-0b1c2d3e4f50\n"
                 "ZONE=fr-par-2\nPUBLIC_IP_ADDRESS=51.15.1.2\n",
    },
    "Oracle": {
        "/opc/v2/instance/": json.dumps({
            "id": "ocid1.instance.oc1.eu-frankfurt-1.abcdef", "canonicalRegionName": "eu-frankfurt-1",
            "availabilityDomain": "Uocm:EU-FRANKFURT-1-AD-2", "shape": "VM.Standard.E4.Flex",
            "region": "fra"}),
    },
    "IBM": {
        "/metadata/v1/instance?version=2025-04-22": json.dumps({
            "id": "0717_6d9a8b1c-2e3f-4a5b-9c8d-7e6f5a4b3c2d", "name": "node-5",
            "profile": {"name": "bx2-2x8", "href": "https://x/profiles/bx2-2x8"},
            "zone": {"name": "us-south-3", "href": "https://x/zones/us-south-3"},
            "vpc": {"id": "r006-1"}}),
    },
}


def refusal(provider, method, path, headers):
    """The status the provider answers a request with when it lacks what the provider checks."""
    if provider == "AWS":
        if path == "/latest/api/token":
            return 0 if method == "PUT" and headers.get("X-aws-ec2-metadata-token-ttl-seconds") else 400
        return 0 if headers.get("X-aws-ec2-metadata-token") == AWS_TOKEN else 401
    if provider == "GCP":
        return 0 if headers.get("Metadata-Flavor") == "Google" else 403
    if provider == "Azure":
        return 0 if headers.get("Metadata") == "True" and "api-version=" in path else 400
    if provider == "Oracle":
        return 0 if headers.get("Authorization") == "Bearer Oracle" else 401
    if provider == "IBM":
        if path.startswith("/instance_identity/v1/token?"):
            return 0 if method == "PUT" and headers.get("Metadata-Flavor") == "ibm" else 400
        return 0 if headers.get("Authorization") == f"Bearer {IBM_TOKEN}" else 401
    return 0


def main():
    provider, mode = sys.argv[1], sys.argv[2]
    out_lock = threading.Lock()

    def log(**kw):
        with out_lock:
            print(json.dumps(kw), flush=True)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, status, body):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            log(method=self.command, path=self.path, headers=dict(self.headers), status=status)

        def handle_any(self):
            if mode == "garbage":
                return self.answer(200, "<html><body>\x01\x02 not metadata</body></html>")
            status = refusal(provider, self.command, self.path, self.headers)
            if status:
                return self.answer(status, "refused")
            if provider == "AWS" and self.path == "/latest/api/token":
                return self.answer(200, AWS_TOKEN)
            if provider == "IBM" and self.path.startswith("/instance_identity/v1/token?"):
                return self.answer(200, json.dumps({"access_token": IBM_TOKEN, "expires_in": 300}))
            body = DOCS[provider].get(self.path)
            if self.command != "GET" or body is None:
                return self.answer(404, "not found")
            self.answer(200, body)

        do_GET = do_PUT = do_POST = handle_any

        def log_message(self, *a):
            pass

    if mode == "silent":
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", 80))
        s.listen(64)
        log(ready=True)
        held = []
        while True:
            c, _ = s.accept()
            held.append(c)  # read nothing, answer nothing
            log(method="?", path="(connection)", headers={}, status=0)
    srv = http.server.ThreadingHTTPServer(("0.0.0.0", 80), Handler)
    log(ready=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
