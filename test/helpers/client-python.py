"""Drives Outpost with Debian's python3-kubernetes, as a LAN script would; run by test/e2e/client-python.test.ts.

Usage: OUTPOST_TOKEN=TOKEN client-python.py SERVER NAMESPACE IMAGE (the admin token, sent as a
bearer token: Outpost's callers without credentials only read). Prints one JSON object with what each call saw;
the TypeScript suite asserts on it. Every wait polls with a generous deadline.
"""
import json
import os
import sys
import threading
import time

from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

server, ns, image = sys.argv[1:4]
cfg = client.Configuration()
cfg.host = server
cfg.api_key = {"authorization": os.environ["OUTPOST_TOKEN"]}
cfg.api_key_prefix = {"authorization": "Bearer"}
api = client.ApiClient(cfg)
v1 = client.CoreV1Api(api)
custom = client.CustomObjectsApi(api)
out = {"version": __import__("kubernetes").__version__}


def poll(what, fn, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.5)
    raise SystemExit("timed out waiting for " + what)


def status_of(fn):
    try:
        fn()
        return 200
    except ApiException as e:
        return e.status


# ConfigMaps: a dict patch is sent as a strategic merge patch, a list as a JSON patch.
cm = v1.create_namespaced_config_map(ns, {"metadata": {"name": "settings", "labels": {"app": "py"}}, "data": {"a": "1"}})
out["cm_created"] = cm.metadata.name
out["cm_get"] = v1.read_namespaced_config_map("settings", ns).data
out["cm_list"] = [c.metadata.name for c in v1.list_namespaced_config_map(ns, label_selector="app=py").items]
out["cm_strategic"] = v1.patch_namespaced_config_map("settings", ns, {"data": {"b": "2"}}).data
out["cm_json"] = v1.patch_namespaced_config_map("settings", ns, [{"op": "remove", "path": "/data/a"}]).data
v1.delete_namespaced_config_map("settings", ns)
out["cm_after_delete"] = status_of(lambda: v1.read_namespaced_config_map("settings", ns))

# Pods.
pod = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "talker", "labels": {"app": "py"}},
    "spec": {
        "containers": [
            {
                "name": "main",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", "echo hello from python; exec sleep 3600"],
            }
        ]
    },
}
out["pod_created"] = v1.create_namespaced_pod(ns, pod).metadata.name
poll("talker Running", lambda: v1.read_namespaced_pod("talker", ns).status.phase == "Running")
out["pod_list"] = [p.metadata.name for p in v1.list_namespaced_pod(ns, label_selector="app=py").items]

# The watch (watch=True on the wire) starts once the pod exists, so its first event is the pod's
# initial ADDED; the patch and the delete come after that event was seen.
events = []
first = threading.Event()
done = threading.Event()
w = watch.Watch()


def watcher():
    try:
        for ev in w.stream(v1.list_namespaced_pod, ns, field_selector="metadata.name=talker", timeout_seconds=300):
            events.append({"type": ev["type"], "step": (ev["object"].metadata.labels or {}).get("step")})
            first.set()
            if ev["type"] == "DELETED":
                w.stop()
    except Exception as e:  # noqa: BLE001 - reported to the suite
        events.append({"type": "EXCEPTION", "step": repr(e)})
    finally:
        first.set()
        done.set()


threading.Thread(target=watcher, daemon=True).start()
if not first.wait(120):
    raise SystemExit("no initial watch event within 120 s")

out["pod_strategic"] = v1.patch_namespaced_pod("talker", ns, {"metadata": {"labels": {"step": "strategic"}}}).metadata.labels
out["pod_json"] = v1.patch_namespaced_pod(
    "talker", ns, [{"op": "add", "path": "/metadata/annotations", "value": {"by": "json"}}]
).metadata.annotations
out["logs"] = poll("logs", lambda: (lambda t: t if "hello from python" in t else "")(v1.read_namespaced_pod_log("talker", ns, container="main")))

# Exec: stdin written as WebSocket text frames (write_stdin with a str).
resp = stream(
    v1.connect_get_namespaced_pod_exec,
    "talker",
    ns,
    container="main",
    command=["sh", "-c", 'read line; echo "got $line"; echo oops >&2; exit 3'],
    stdin=True,
    stdout=True,
    stderr=True,
    tty=False,
    _preload_content=False,
)
resp.write_stdin("ping\n")
stdout, stderr = "", ""
deadline = time.monotonic() + 120
while resp.is_open() and time.monotonic() < deadline:
    resp.update(timeout=1)
    stdout += resp.read_stdout() if resp.peek_stdout() else ""
    stderr += resp.read_stderr() if resp.peek_stderr() else ""
out["exec_open_at_end"] = resp.is_open()
stdout += resp.read_stdout() if resp.peek_stdout() else ""
stderr += resp.read_stderr() if resp.peek_stderr() else ""
out["exec_stdout"] = stdout
out["exec_stderr"] = stderr
out["exec_returncode"] = resp.returncode
resp.close()

v1.delete_namespaced_pod("talker", ns, grace_period_seconds=0)
poll("talker gone", lambda: status_of(lambda: v1.read_namespaced_pod("talker", ns)) == 404)
if not done.wait(120):
    raise SystemExit("no DELETED watch event within 120 s")
out["events"] = events

# A device through CustomObjectsApi: get, then a patch, which this client sends as a JSON merge patch.
ref = ("devices.kubeedge.io", "v1beta1", "default", "devices", "thermometer")
out["device_kind"] = custom.get_namespaced_custom_object(*ref)["kind"]
patched = custom.patch_namespaced_custom_object(*ref, {"metadata": {"labels": {"room": "hall"}}})
out["device_room"] = patched["metadata"]["labels"]["room"]

print(json.dumps(out))
