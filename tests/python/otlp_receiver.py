"""An OTLP/HTTP receiver for the tests: decodes what it is sent with the official protobuf
definitions (opentelemetry-proto), in either encoding, and prints one JSON line per span
(`/v1/traces`) or per metric (`/v1/metrics`) on standard output. The first line is the port
it listens on (127.0.0.1).

OTLP/JSON differs from protobuf's JSON mapping: trace and span ids are hex, not base64.
A JSON request whose ids are not hex is refused (400), so the test sees it.

A collector in trouble, for the tests that Weir's requests never wait for one:
`--status 429 --retry-after 5` answers every export with that status (a throttling
collector), `--delay 3` answers each export 3 s late (a slow one)."""

import argparse
import base64
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def hex_to_base64(value, length):
    if not isinstance(value, str) or len(value) != length or any(c not in "0123456789abcdef" for c in value):
        raise ValueError(f"not a hex id of {length} characters: {value!r}")
    return base64.b64encode(bytes.fromhex(value)).decode()


def from_json(body, path):
    doc = json.loads(body)
    if path == "/v1/metrics":
        return json_format.ParseDict(doc, ExportMetricsServiceRequest())
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                span["traceId"] = hex_to_base64(span["traceId"], 32)
                span["spanId"] = hex_to_base64(span["spanId"], 16)
                if span.get("parentSpanId"):
                    span["parentSpanId"] = hex_to_base64(span["parentSpanId"], 16)
                for link in span.get("links", []):
                    link["traceId"] = hex_to_base64(link["traceId"], 32)
                    link["spanId"] = hex_to_base64(link["spanId"], 16)
    return json_format.ParseDict(doc, ExportTraceServiceRequest())


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(kvs):
    return {kv.key: value_of(kv.value) for kv in kvs}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if ARGS.delay:
            time.sleep(ARGS.delay)
        if ARGS.status != 200:
            print(json.dumps({"answered": ARGS.status, "path": self.path}), flush=True)
            self.send_response(ARGS.status)
            if ARGS.retry_after is not None:
                self.send_header("Retry-After", str(ARGS.retry_after))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        kind = self.headers.get("Content-Type", "")
        try:
            message = ExportMetricsServiceRequest if self.path == "/v1/metrics" else ExportTraceServiceRequest
            if kind.startswith("application/json"):
                request, encoding = from_json(body, self.path), "json"
            elif kind.startswith("application/x-protobuf"):
                request, encoding = message.FromString(body), "protobuf"
            else:
                raise ValueError(f"unexpected Content-Type {kind!r}")
        except Exception as e:  # noqa: BLE001 - the test reads the refusal
            print(json.dumps({"refused": str(e), "path": self.path}), flush=True)
            self.send_response(400)
            self.end_headers()
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path == "/v1/metrics":
            self.print_metrics(request, encoding)
            self.answer(ExportMetricsServiceResponse(), encoding)
            return
        for rs in request.resource_spans:
            resource = attributes(rs.resource.attributes)
            for ss in rs.scope_spans:
                for span in ss.spans:
                    print(json.dumps({
                        "encoding": encoding,
                        "path": self.path,
                        "headers": headers,
                        "resource": resource,
                        "scope": ss.scope.name,
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                        "status": span.status.code,
                        "status_message": span.status.message,
                        "attributes": attributes(span.attributes),
                        "links": [{"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()} for l in span.links],
                    }), flush=True)
        self.answer(ExportTraceServiceResponse(), encoding)

    def print_metrics(self, request, encoding):
        for rm in request.resource_metrics:
            resource = attributes(rm.resource.attributes)
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    kind = metric.WhichOneof("data")
                    data = getattr(metric, kind)
                    points = []
                    for p in data.data_points:
                        point = {"attributes": attributes(p.attributes)}
                        if kind == "histogram":
                            point.update(count=p.count, sum=p.sum, bounds=list(p.explicit_bounds), buckets=list(p.bucket_counts))
                        else:
                            point["value"] = p.as_double if p.WhichOneof("value") == "as_double" else p.as_int
                        points.append(point)
                    print(json.dumps({
                        "metric": metric.name,
                        "kind": kind,
                        "monotonic": getattr(data, "is_monotonic", None),
                        "encoding": encoding,
                        "resource": resource,
                        "points": points,
                    }), flush=True)

    def answer(self, answer, encoding):
        if encoding == "json":
            out, out_type = json_format.MessageToJson(answer).encode(), "application/json"
        else:
            out, out_type = answer.SerializeToString(), "application/x-protobuf"
        self.send_response(200)
        self.send_header("Content-Type", out_type)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


parser = argparse.ArgumentParser()
parser.add_argument("--status", type=int, default=200)
parser.add_argument("--retry-after", type=int, default=None)
parser.add_argument("--delay", type=float, default=0)
ARGS = parser.parse_args()

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
