"""The report's arithmetic on small hand-made runs: kube-scheduler's own way of summing a pod's requests, the
aggregates, the runs' spread, the moved pods, the table and the picture."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.report import (
    compare, html_page, moved, percentile, picture, pod_requests, quantity, summarize, table)


def node(name, cpu="4", memory="8Gi", zone=None):
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": {"cpu": cpu, "memory": memory}}}


def pod(name, cpu="500m", memory="1Gi", node_name=None, owner=None, **spec):
    meta = {"name": name, "namespace": "apps"}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "x", "uid": "u", "apiVersion": "apps/v1"}]
    body = dict({"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}, **spec)
    if node_name:
        body["nodeName"] = node_name
    return {"metadata": meta, "spec": body}


@pytest.mark.parametrize("text, value", [("250m", Decimal("0.25")), ("2", 2), ("1.5Gi", 1.5 * 2 ** 30),
                                         ("1e3", 1000), ("128M", 128 * 10 ** 6), ("1Ki", 1024), (3, 3)])
def test_quantities_read_as_the_api_writes_them(text, value):
    assert quantity(text) == Decimal(value)


def test_a_pods_requests_are_kube_schedulers_sum():
    """Containers add up; an init step counts alone but with the sidecars started before it; sidecars run beside
    the containers; the overhead adds; pod-level requests win where the pod sets them."""
    plain = pod("a", "300m", "100Mi")
    plain["spec"]["containers"].append({"name": "d", "resources": {"requests": {"cpu": "200m"}}})
    assert pod_requests(plain) == (500, 100 * 2 ** 20)
    big_init = pod("b", "100m", "10Mi", initContainers=[{"name": "i", "resources": {"requests": {"cpu": "2"}}}])
    assert pod_requests(big_init) == (2000, 10 * 2 ** 20)
    sidecar = pod("c", "100m", "10Mi", initContainers=[
        {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m"}}},
        {"name": "i", "resources": {"requests": {"cpu": "120m"}}}], overhead={"cpu": "10m"})
    # containers 100 + sidecar 50 = 150 running; the init step 120 + sidecar 50 = 170 is larger; then overhead 10.
    assert pod_requests(sidecar) == (180, 10 * 2 ** 20)
    pod_level = pod("d", "100m", "10Mi", resources={"requests": {"cpu": "1", "memory": "1Gi"}})
    assert pod_requests(pod_level) == (1000, 2 ** 30)


def test_percentile_is_nearest_rank():
    assert percentile(range(1, 11), 0.9) == 9
    assert percentile([5], 0.9) == 5
    assert percentile([], 0.9) == 0


SNAPSHOT = {
    "nodes": [node("n1", zone="a"), node("n2", zone="a"), node("n3", zone="b")],
    "pods": [pod("p1"), pod("p2"), pod("p3", "4"), pod("ds-1", "100m", "0", "n3", owner="DaemonSet"),
             pod("mirror", "100m", "0", "n2")],
}


def test_a_summary_counts_nodes_requests_zones_and_reasons():
    SNAPSHOT["pods"][4]["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    run = {"placed": {"apps/p1": "n1", "apps/p2": "n1", "apps/ds-1": "n3"},
           "unschedulable": {"apps/p3": "0/3 nodes are available: 3 Insufficient cpu."}, "seconds": 1.5}
    summary = summarize(SNAPSHOT, run, fixed=["apps/mirror"])
    # n3 holds only a DaemonSet pod and n2 only a mirror pod: neither counts as used.
    assert summary["nodes_used"] == 1
    assert summary["per_node"]["n1"] == {"cpu_millicores": 1000, "memory_bytes": 2 * 2 ** 30, "cpu_percent": 25.0,
                                         "memory_percent": 25.0}
    assert summary["cpu_percent"] == {"min": 2.5, "median": 2.5, "p90": 25.0, "max": 25.0}
    assert summary["zones"] == {"a": 3, "b": 1}
    assert summary["reasons"] == [{"reason": "0/3 nodes are available: 3 Insufficient cpu.", "pods": 1}]
    assert summary["unschedulable"] == 1


def _run(placed, seconds=1.0, unschedulable=None):
    return {"placed": placed, "unschedulable": unschedulable or {}, "seconds": seconds}


def test_compare_gives_the_spread_over_runs_and_the_pods_that_move():
    result = {
        "runs": {
            "current": [_run({"apps/p1": "n1", "apps/p2": "n2"}), _run({"apps/p1": "n2", "apps/p2": "n1"}, 2.0)],
            "proposed": [_run({"apps/p1": "n1", "apps/p2": "n1"}),
                         _run({"apps/p1": "n3", "apps/p2": "n3"}, unschedulable={"apps/p3": "no"})]},
        "fixed": []}
    report = compare(SNAPSHOT, result)
    assert report["configs"]["current"]["spread"]["nodes_used"] == {"min": 2, "max": 2}
    assert report["configs"]["proposed"]["spread"]["nodes_used"] == {"min": 1, "max": 1}
    assert report["configs"]["proposed"]["spread"]["unschedulable"] == {"min": 0, "max": 1}
    assert report["moved"]["count"] == 1 and report["moved"]["pods"] == ["apps/p2"]
    assert report["moved"]["spread"] == {"min": 1, "max": 2}
    lines = table(report)
    assert lines[0].split() == ["current", "proposed"]
    assert [line.split()[2:] for line in lines if line.startswith("nodes used")] == [["2", "1"]]
    assert [line for line in lines if line.startswith("unschedulable pods")][0].split()[2:] == ["0", "0", "(0..1)"]
    assert "pods whose node changes: 1 (1..2 over the runs)" in lines


def test_moved_counts_a_pod_that_fits_in_one_run_only():
    assert moved(_run({"a": "n1", "b": "n1"}), _run({"a": "n1"})) == ["b"]


def test_the_picture_is_one_svg_with_a_bar_per_node_resource_and_configuration():
    result = {"runs": {"current": [_run({"apps/p1": "n1", "apps/p2": "n2"})],
                       "proposed": [_run({"apps/p1": "n1", "apps/p2": "n1"})]}, "fixed": []}
    report = compare(SNAPSHOT, result)
    svg = ET.fromstring(picture(report, "LeastAllocated -> MostAllocated <&>"))
    bars = svg.findall("{http://www.w3.org/2000/svg}rect")
    titles = [rect.find("{http://www.w3.org/2000/svg}title").text for rect in bars if len(rect)]
    assert len(titles) == 3 * 2 * 2
    assert "n1 proposed cpu: 25.0%" in titles and "n2 proposed cpu: 0.0%" in titles
    assert "<svg" in html_page(report) and "nodes used" in html_page(report)


def test_the_cluster_as_it_is_comes_first_and_the_pods_moved_are_between_the_last_two():
    snapshot = {"nodes": SNAPSHOT["nodes"], "pods": [
        pod("p1", node_name="n1"), pod("p2", node_name="n2"),
        dict(pod("p3", "4"), status={"conditions": [{"type": "PodScheduled", "status": "False", "reason":
                                                     "Unschedulable", "message": "0/3 nodes are available"}]}),
        dict(pod("gated"), status={"conditions": [{"type": "PodScheduled", "status": "False",
                                                   "reason": "SchedulingGated"}]})]}
    result = {"runs": {"current": [_run({"apps/p1": "n1", "apps/p2": "n2"})],
                       "proposed": [_run({"apps/p1": "n1", "apps/p2": "n1"})]}, "fixed": []}
    report = compare(snapshot, result, observed_label="cluster now")
    assert report["order"] == ["cluster now", "current", "proposed"]
    now = report["configs"]["cluster now"]
    assert now["unschedulable_pods"] == {"apps/p3": "0/3 nodes are available"}
    assert now["runs"][0]["nodes_used"] == 2
    assert report["moved"]["pods"] == ["apps/p2"]
    lines = table(report)
    assert [line.split()[1:] for line in lines if line.startswith("seconds")] == [["-", "1.0", "1.0"]]
    svg = ET.fromstring(picture(report))
    titles = [rect.find("{http://www.w3.org/2000/svg}title").text
              for rect in svg.iter("{http://www.w3.org/2000/svg}rect") if len(rect)]
    assert not [title for title in titles if "cluster now" in title] and len(titles) == 3 * 2 * 2


def test_beyond_sixty_nodes_the_picture_draws_each_configurations_nodes_sorted_as_lines():
    nodes = [node("n%03d" % index) for index in range(100)]
    placed = dict(("apps/p%d" % index, "n%03d" % (index % 10)) for index in range(20))
    pods = [pod("p%d" % index) for index in range(20)]
    report = compare({"nodes": nodes, "pods": pods},
                     {"runs": {"current": [_run(placed)], "proposed": [_run(dict.fromkeys(placed, "n000"))]}})
    svg = ET.fromstring(picture(report))
    lines = svg.findall("{http://www.w3.org/2000/svg}polyline")
    assert [line.find("{http://www.w3.org/2000/svg}title").text for line in lines] == [
        "current cpu, nodes from the fullest", "current memory, nodes from the fullest",
        "proposed cpu, nodes from the fullest", "proposed memory, nodes from the fullest"]
    # proposed: one node at 20 x 500m of 4 CPUs (capped at 100%), then 99 empty ones.
    points = [point.split(",") for point in lines[2].get("points").split()]
    assert len(points) == 100 and float(points[0][1]) == 30.0 and float(points[1][1]) == 230.0
    assert not [rect for rect in svg.iter("{http://www.w3.org/2000/svg}rect") if len(rect)]
