"""The real kube-apiserver judges every selector expression of a corpus, and its verdict equals ours.

`dra_cel.check.problems()` claims to accept exactly the device selectors kube-apiserver v1.37 accepts
in a ResourceClaimTemplate (resource.k8s.io/v1), plus a little more that it rejects on purpose. This
test holds it to that: each expression of CORPUS is put in a claim template and dry-run created on
the real server (tests/peers, v1.37.2), and the server's verdict (201 or 422 at that selector) is
compared with ours (`bool(problems(expression))`).

CORPUS is deterministic data: selectors as the DRA documentation and the drivers' examples write
them (NVIDIA's k8s-dra-driver-gpu, dra-example-driver, dranet, Intel's and AMD's GPU drivers), one
or more uses of every library base.go gives a 1.37 server, targeted mistakes, and systematic
mutations of the valid ones. Every disagreement is listed in KNOWN_DISAGREEMENTS under one of the
few reasons below; the test fails on a disagreement that is not listed, and on a listed one that
no longer disagrees, so the list is always the true one (and docs/validation.md's counts can be read off it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from modelplane_render.dra_cel.check import MAX_EXPRESSION_BYTES, problems

pytestmark = pytest.mark.real_peers

NAMESPACE = "dra-cel"
SELECTOR_FIELD = "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"

# --- the corpus ---------------------------------------------------------------------------------------

NVIDIA = 'device.attributes["gpu.nvidia.com"]'
NVIDIA_CAPACITY = 'device.capacity["gpu.nvidia.com"]'
EXAMPLE = 'device.attributes["gpu.example.com"]'
EXAMPLE_CAPACITY = 'device.capacity["gpu.example.com"]'
DRANET = 'device.attributes["dra.net"]'
INTEL = 'device.attributes["gpu.intel.com"]'
INTEL_CAPACITY = 'device.capacity["gpu.intel.com"]'
AMD = 'device.attributes["gpu.amd.com"]'
AMD_CAPACITY = 'device.capacity["gpu.amd.com"]'

# Selectors as the drivers' documentation and examples write them (the attribute names are theirs).
DRIVER_EXAMPLES = [
    # NVIDIA k8s-dra-driver-gpu
    'device.driver == "gpu.nvidia.com"',
    f'{NVIDIA}.productName == "NVIDIA A100-SXM4-40GB"',
    f'{NVIDIA}.type == "gpu"',
    f'{NVIDIA}.type == "mig" && {NVIDIA}.profile == "1g.5gb"',
    f'{NVIDIA_CAPACITY}.memory.compareTo(quantity("40Gi")) >= 0',
    f'{NVIDIA}.driverVersion.isGreaterThan(semver("1.0.0"))',
    f'{NVIDIA}.driverVersion.compareTo(semver("550.54.15")) >= 0',
    f'{NVIDIA}.cudaComputeCapability.compareTo(semver("8.0.0")) >= 0',
    f"{NVIDIA}.cudaDriverVersion.major() >= 12",
    f'{NVIDIA}.architecture == "Hopper"',
    f'{NVIDIA}.brand == "Nvidia"',
    f'{NVIDIA}.productName.startsWith("NVIDIA H100")',
    f'{NVIDIA}.productName.contains("H100")',
    f'{NVIDIA}.productName.lowerAscii().contains("a100")',
    f"{NVIDIA}.index < 4",
    f"{NVIDIA}.index in [0, 1, 2, 3]",
    f'{NVIDIA}.uuid == "GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c"',
    f'{NVIDIA_CAPACITY}.multiprocessors.compareTo(quantity("98")) >= 0',
    f'{NVIDIA_CAPACITY}.memory.isGreaterThan(quantity("24Gi"))',
    f"{NVIDIA_CAPACITY}.memory.asApproximateFloat() > 4.0e10",
    f"{NVIDIA_CAPACITY}.memory.asInteger() >= 42949672960",
    'device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"',
    f'device.driver == "gpu.nvidia.com" && {NVIDIA}.productName in ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]',
    f'{NVIDIA}.productName.matches("^NVIDIA (A|H)100")',
    # dra-example-driver
    'device.driver == "gpu.example.com"',
    f'{EXAMPLE}.model == "LATEST-GPU-MODEL"',
    'device.attributes["dra.example.com"].model == "LATEST-GPU-MODEL"',
    'device.attributes["ext.example.com"].family == "a"',
    'device.capacity["dra.example.com"].modules.compareTo(quantity("10")) > 0',
    f"{EXAMPLE}.index == 0",
    f'{EXAMPLE}.driverVersion.isGreaterThan(semver("1.0.0"))',
    f'{EXAMPLE}.driverVersion.isLessThan(semver("2.0.0"))',
    f'{EXAMPLE_CAPACITY}.memory.compareTo(quantity("80Gi")) == 0',
    f'{EXAMPLE}.uuid.matches("^gpu-[0-9a-f-]+$")',
    '"gpu.example.com" in device.attributes',
    f"has({EXAMPLE}.model)",
    f'{EXAMPLE}.?model.orValue("") == "LATEST-GPU-MODEL"',
    # dranet
    f"{DRANET}.rdma == true",
    f'{DRANET}.ifName == "eth1"',
    f'{DRANET}.ifName.startsWith("eth")',
    f'{DRANET}.pciVendor == "Mellanox Technologies"',
    f"{DRANET}.mtu >= 9000",
    f"{DRANET}.virtual == false",
    f'{DRANET}.kind == "network"',
    f"{DRANET}.sriov == true && {DRANET}.sriovVfs > 0",
    f"{DRANET}.numaNode == 0",
    f'{DRANET}.encapsulation == "ether"',
    f'{DRANET}.ifName.matches("^ens[0-9]+f[0-9]+$")',
    f'cidr("10.0.0.0/8").containsIP({DRANET}.ipv4)',
    f"isIP({DRANET}.ipv4)",
    f"ip({DRANET}.ipv4).family() == 4",
    # Intel
    f"{INTEL}.family == 'Flex'",
    f'{INTEL_CAPACITY}.memory.compareTo(quantity("4Gi")) >= 0',
    "device.attributes[\"gaudi.intel.com\"].model == 'Gaudi3'",
    f'{INTEL_CAPACITY}.millicores.compareTo(quantity("500m")) >= 0',
    f'{INTEL}.model == "0x56c0"',
    f"{INTEL}.sriov == true",
    # AMD
    f'{AMD}.productName == "AMD Instinct MI300X"',
    f'{AMD}.partitionProfile == "spx_nps1"',
    f'{AMD_CAPACITY}.memory.compareTo(quantity("192Gi")) >= 0',
    f'{AMD}.driverVersion.compareTo(semver("6.8.5")) >= 0',
    f'{AMD}.productName.contains("MI300")',
    # the device itself
    "device.allowMultipleAllocations",
    "!device.allowMultipleAllocations",
    "device.allowMultipleAllocations == true",
    'device.driver.endsWith(".nvidia.com")',
    "size(device.attributes) > 0",
]

# One or more uses of each library a 1.37 API server compiles a new selector with (base.go at 1.36).
LIBRARY_USES = [
    # bindings, macros, two-variable comprehensions
    f'cel.bind(a, {NVIDIA}, a.productName == "X" || a.architecture == "Hopper")',
    'cel.bind(x, device.driver, cel.bind(y, x + "/", y.startsWith("gpu")))',
    'device.attributes.exists(d, d.endsWith(".nvidia.com"))',
    f"{NVIDIA_CAPACITY}.all(k, sign({NVIDIA_CAPACITY}[k]) >= 0)",
    f'["A100", "H100"].exists(m, {NVIDIA}.productName.contains(m))',
    f"[1, 2, 3].exists_one(i, i == {EXAMPLE}.index)",
    "device.attributes.map(k, k).size() > 0",
    "[1, 2, 3].filter(x, x > 1).size() == 2",
    'device.attributes.filter(d, d.startsWith("gpu.")).size() <= 1',
    f'{NVIDIA}.all(k, v, k != "" && v != null)',
    "[1, 2].exists(i, v, i < v)",
    "[1, 2].transformList(i, v, i * v) == [0, 2]",
    '{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}',
    '{"a": 1}.transformMapEntry(k, v, {k + "b": v}) == {"ab": 1}',
    "device.capacity.all(d, q, size(q) >= 0)",
    "[1, 2, 3].existsOne(i, v, v == 2)",
    # strings v2
    '"gpu".charAt(0) == "g"',
    '"a100".indexOf("1") == 1',
    '"a100".lastIndexOf("0") == 3',
    '"A100".lowerAscii() == "a100"',
    '"a100".upperAscii() == "A100"',
    '"a-b".replace("-", "_") == "a_b"',
    '"a,b".split(",").size() == 2',
    '"a100".substring(1, 2) == "1"',
    '"  x ".trim() == "x"',
    '["a", "b"].join("-") == "a-b"',
    'strings.quote("a") == "\\"a\\""',
    '"%s-%d".format(["a", 1]) == "a-1"',
    '"%.2f".format([1.5]) == "1.50"',
    f'"%s".format([{NVIDIA}.productName]) != ""',
    # lists (ext.Lists v3 and the Kubernetes list library v0), sets
    "[1, 2, 3].slice(1, 2) == [2]",
    "[[1], [2]].flatten() == [1, 2]",
    "[3, 1, 2].sort() == [1, 2, 3]",
    '[{"n": 2}, {"n": 1}].sortBy(e, e.n)[0].n == 1',
    "lists.range(3) == [0, 1, 2]",
    "[1, 1, 2].distinct() == [1, 2]",
    "[1, 2].reverse() == [2, 1]",
    "[1, 2, 3].first().orValue(0) == 1",
    "[1, 2, 3].last().orValue(0) == 3",
    "[1, 2, 3].isSorted()",
    "[1, 2, 3].sum() == 6",
    "[1, 2, 3].max() == 3",
    "[1, 2, 3].min() == 1",
    "[1, 2, 3].indexOf(2) == 1",
    "[1, 2, 2].lastIndexOf(2) == 2",
    '["b", "a"].isSorted() == false',
    "[1.5, 2.5].sum() == 4.0",
    'sets.contains(["a", "b"], ["a"])',
    'sets.equivalent(["a", "b"], ["b", "a"])',
    'sets.intersects(["a"], ["a", "b"])',
    # optionals
    f"{NVIDIA}.?productName.hasValue()",
    f'{NVIDIA}.?productName.orValue("none") != "none"',
    'device.attributes[?"gpu.nvidia.com"].hasValue()',
    "optional.of(1).value() == 1",
    "optional.none().orValue(2) == 2",
    "[?optional.of(1), ?optional.none()].size() == 1",
    '{?"a": optional.of(1)}.size() == 1',
    "optional.ofNonZeroValue(0).hasValue() == false",
    f"{NVIDIA}.?productName.optMap(p, p.size()).orValue(0) > 0",
    # quantity
    'isQuantity("1Gi")',
    'quantity("1Gi").add(quantity("1Gi")).isGreaterThan(quantity("1Gi"))',
    'quantity("2Gi").sub(1).isLessThan(quantity("2Gi"))',
    'quantity("1").add(1).compareTo(quantity("2")) == 0',
    'quantity("1.5").isInteger() == false',
    'sign(quantity("-1")) == -1',
    f'{NVIDIA_CAPACITY}.memory == quantity("40Gi")',
    # semver
    'isSemver("1.2.3")',
    'semver("v1.2", true).major() == 1',
    'isSemver("v1.2", true)',
    'semver("1.2.3").minor() == 2',
    'semver("1.2.3").patch() == 3',
    f'{NVIDIA}.driverVersion == semver("550.54.15")',
    # URLs, regex
    'url("https://example.com:8080/x?a=b").getHost() == "example.com:8080"',
    'url("https://example.com:8080/x").getHostname() == "example.com"',
    'url("https://example.com:8080/x").getPort() == "8080"',
    'url("https://example.com/x").getScheme() == "https"',
    'url("https://example.com/a%20b").getEscapedPath() == "/a%20b"',
    'url("https://example.com/?a=b").getQuery()["a"] == ["b"]',
    'isURL("https://example.com")',
    '"abc".find("[a-z]+") == "abc"',
    '"a1b2".findAll("[0-9]").size() == 2',
    '"a1b2".findAll("[0-9]", 1) == ["1"]',
    '"abc".matches("^a")',
    'matches("abc", "b")',
    # IP and CIDR
    'ip("10.0.0.1").isLoopback() == false',
    'ip("::1").family() == 6',
    'ip("127.0.0.1").isLoopback()',
    'ip("0.0.0.0").isUnspecified()',
    'ip("fe80::1").isLinkLocalUnicast()',
    'ip("ff02::1").isLinkLocalMulticast()',
    'ip("8.8.8.8").isGlobalUnicast()',
    'ip.isCanonical("10.0.0.1")',
    'ip("10.0.0.1") == ip("10.0.0.1")',
    'string(ip("10.0.0.1")) == "10.0.0.1"',
    'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")',
    'cidr("10.0.0.0/8").containsCIDR(cidr("10.1.0.0/16"))',
    'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))',
    'cidr("10.0.0.0/8").prefixLength() == 8',
    'cidr("10.0.0.0/8").ip() == ip("10.0.0.0")',
    'cidr("10.1.0.0/8").masked() == cidr("10.0.0.0/8")',
    'string(cidr("10.0.0.0/8")) == "10.0.0.0/8"',
    'isCIDR("10.0.0.0/8")',
    # format
    'format.dns1123Label().validate("eth0").hasValue() == false',
    f"!format.dns1123Subdomain().validate({DRANET}.ifName).hasValue()",
    'format.named("dns1123Label").hasValue()',
    'format.uuid().validate("x").hasValue()',
    'format.labelValue().validate("a").orValue([]).size() == 0',
    # numbers, cross-type comparisons, conversions, time
    f"{EXAMPLE}.index < 2.5",
    "1 < 2.0",
    "1u <= 2",
    "3.0 > 2u",
    "2 >= 1u",
    'int("12") == 12',
    'string(1) == "1"',
    "double(1) == 1.0",
    "uint(1) == 1u",
    "type(device.driver) == string",
    'bytes("a") == b"a"',
    "dyn(1) == 1",
    'duration("1h") > duration("30m")',
    'timestamp("2024-01-01T00:00:00Z") < timestamp("2025-01-01T00:00:00Z")',
    'duration("1h").getHours() == 1',
    'timestamp("2024-01-01T00:00:00Z").getFullYear() == 2024',
    'timestamp("2024-01-01T00:00:00Z") + duration("1h") > timestamp("2024-01-01T00:00:00Z")',
    '"abc".indexOf("c", 1) == 2',
    '"abca".lastIndexOf("a", 2) == 0',
    '"abc".substring(1) == "bc"',
    '"aaa".replace("a", "b", 1) == "baa"',
    '"a b c".split(" ", 2).size() == 2',
    '"%x".format([255]) == "ff"',
    '"%X".format([255]) == "FF"',
    '"%o".format([8]) == "10"',
    '"%b".format([5]) == "101"',
    '"%e".format([1.0]) != ""',
    '"%d".format([1u]) == "1"',
    '"%s".format([[1, 2]]) == "[1, 2]"',
    '"%s".format([device.driver]) != ""',
    '"%s %s".format([true, b"x"]) != ""',
    '"%.3f".format([double(device.attributes.size())]) != ""',
    '"%s".format([duration("1s")]) == "1s"',
    "[1, 2].sum() == 3",
    '[duration("1s")].sum() == duration("1s")',
    '["a", "b"].max() == "b"',
    "[1u, 2u].min() == 1u",
    '[timestamp("2024-01-01T00:00:00Z")].isSorted()',
    '[b"a"].isSorted()',
    "[true, false].max() == true",
    '"abc".indexOf("b") == 1',
    "[[1], [[2]]].flatten(2) == [1, 2]",
    '["b", "a"].sort()[0] == "a"',
    "lists.range(0).size() == 0",
    '[{"a": 1}].map(m, m.a).sum() == 1',
    '{"a": 1}.all(k, k == "a")',
    '{"a": 1}.exists(k, v, v == 1)',
    '{"a": 1}.existsOne(k, v, v == 1)',
    "[1, 2].all(i, v, v > i)",
    "[1, 2].transformList(i, v, v > 1, v * 2) == [4]",
    '{"a": 1}.transformMap(k, v, v > 0, v) == {"a": 1}',
    'optional.ofNonZeroValue("").orValue("x") == "x"',
    "optional.of(1).optFlatMap(v, optional.of(v + 1)).value() == 2",
    "optional.of(1).or(optional.of(2)).value() == 1",
    "[1, 2][?0].orValue(0) == 1",
    '{"a": 1}[?"a"].hasValue()',
    'device.capacity[?"gpu.nvidia.com"].hasValue()',
    'device.attributes["gpu.nvidia.com"].?productName.?x.hasValue() == false',
    'quantity("1Gi").asApproximateFloat() > 1.0e9',
    'quantity("1").asInteger() == 1',
    'isQuantity("x") == false',
    'isSemver("x") == false',
    'semver("1.2.3").isLessThan(semver("1.2.4"))',
    'semver("1.2.3") == semver("1.2.3")',
    'url("https://a.example").getScheme() == "https" && isURL("/x")',
    'ip("10.0.0.1") in [ip("10.0.0.1")]',
    'isIP("::1") && isCIDR("::/0")',
    'format.dns1035Label().validate("a").hasValue() == false',
    'format.qualifiedName().validate("a/b").hasValue() == false',
    'format.dns1123LabelPrefix().validate("a").hasValue() == false',
    'format.dns1123SubdomainPrefix().validate("a").hasValue() == false',
    'format.dns1035LabelPrefix().validate("a").hasValue() == false',
    'format.uri().validate("https://a").hasValue() == false',
    'format.byte().validate("YQ==").hasValue() == false',
    'format.date().validate("2024-01-01").hasValue() == false',
    'format.datetime().validate("2024-01-01T00:00:00Z").hasValue() == false',
    'format.named("uuid").value().validate("x").hasValue()',
    'device.attributes["gpu.nvidia.com"].productName in ["A", "B"]',
    'device.attributes["gpu.nvidia.com"].index == 1.0',
    'device.attributes["gpu.nvidia.com"].index > 1u',
    'device.attributes["gpu.nvidia.com"].productName == device.attributes["gpu.amd.com"].productName',
    'device.attributes["gpu.nvidia.com"].productName.size() > 0',
    "size(device.driver) <= 63",
    "device.driver.size() <= 63",
    'device.driver + "x" != "x"',
    'device.driver in ["gpu.nvidia.com", "gpu.amd.com"]',
    'device.driver.split(".")[0] == "gpu"',
    'device.driver.charAt(0) == "g"',
    'device.driver.trim().upperAscii() != ""',
    'device.attributes["gpu.nvidia.com"].productName.split(" ").exists(w, w == "H100")',
    'timestamp("2024-01-01T00:00:00Z").getDayOfWeek() == 1',
    'duration("90m").getMinutes() == 90',
    'int(timestamp("2024-01-01T00:00:00Z")) > 0',
    'string(duration("1s")) == "1s"',
    'double("1.5") == 1.5',
    'uint("1") == 1u',
    "int(1.9) == 1",
    'bool("true")',
    'string(b"a") == "a"',
    'dyn(device.attributes["gpu.nvidia.com"].index) == 1',
    "[1, 2] + [3] == [1, 2, 3]",
    '"a" + "b" == "ab"',
    "1 + 2 * 3 % 4 - 5 / 1 == 2",
    "-1 < 0 && !false",
    "null == null",
    "type(1) == int",
    'b"\\x00" != b""',
    'device.attributes["gpu.nvidia.com"] == {}',
    'device.capacity["gpu.nvidia.com"].size() > 0',
    '{"a": [1]}["a"][0] == 1',
    # odd and multi-line text
    f'device.driver == "gpu.nvidia.com" &&\n  {NVIDIA}.productName.contains("H100")',
    '// a comment\ndevice.driver == "gpu.example.com"',
    'device.driver == "gpu.example.com" // trailing comment',
    'device.driver == "gpu.example.com"\n',
    '\tdevice.driver\t==\t"gpu.example.com"',
    'r"\\d+" == "\\\\d+"',
    '"""triple""" == "triple"',
    f'{EXAMPLE}.model == "Ü-GPU-ß"',
    f'{EXAMPLE}.model == "\\u00dc"',
    'device.driver == "gpu.example.com" ? true : false',
    "(((true)))",
    "true",
    "false || device.allowMultipleAllocations",
]

# Mistakes, each of one kind (the mutations below make more of the common ones).
MISTAKES = [
    "math.greatest(1, 2) == 2",
    'base64.encode(b"a") == "YQ=="',
    'device.driver ==\n"gpu.example.com" &&\n  devices.attributes.size() > 0',
    "[1, 2].includes(1)",
    '"%s".format([device.attributes["gpu.nvidia.com"].index])',
    '"%d".format(["a"]) == ""',
    '"%q".format([1]) == ""',
    '"%s %s".format(["a"]) == ""',
    '"%d".format([1.5]) == ""',
    '"%x".format([1.5]) == ""',
    '"abc".substring("1") == "bc"',
    '"a".indexOf(1) == 0',
    '"a".split(1).size() == 1',
    '"a".replace("a") == "a"',
    '[1, "a"].join(",") == ""',
    '[1].join(",") == "1"',
    '"a".join(",") == "a"',
    '["a"].sort(1) == ["a"]',
    "[1].slice(0) == [1]",
    'lists.range("3").size() == 3',
    "[1, 2].sortBy(x) == [1, 2]",
    '[[1], ["a"]].size() == 2',
    '{"a": 1}.transformList(k, v, v) == [1]',
    "[1].transformMap(i, v, v) == {0: 1}",
    "[1].all(i, v, w, true)",
    "optional.of() == optional.none()",
    "optional.none().value() == 1 && optional.none().orValue()",
    "device.attributes.?gpu.hasValue() == 1",
    'quantity("1").sign() == 1',
    "sign(1) == 1",
    'quantity("1").add("1").isInteger()',
    'quantity("1").isGreaterThan(1)',
    'quantity("1").asApproximateFloat() == 1',
    'semver("1.0.0", "x").major() == 1',
    "semver(1).major() == 1",
    "isSemver(1)",
    'semver("1.0.0").compareTo(quantity("1")) == 0',
    'url(1).getHost() == ""',
    'url("https://a").getQuery() == ""',
    "ip(1).family() == 4",
    'ip("10.0.0.1").family() == "4"',
    'cidr("10.0.0.0/8").containsIP(1)',
    'cidr("10.0.0.0/8").prefixLength() == "8"',
    "ip.isCanonical(1)",
    "isCIDR(1)",
    'format.dns1123Label("x").validate("a").hasValue()',
    "format.named(1).hasValue()",
    'format.dns1123Label().validate("a") == ""',
    '"abc".find(1) == ""',
    '"abc".findAll("a", "1").size() == 1',
    "device.driver.matches(1)",
    'sets.contains("a", ["a"])',
    'sets.equivalent([1], ["a"])',
    "cel.bind(x, 1, x) == 1 && cel.bind(x, 1, x)",
    "cel.bind(x.y, 1, true)",
    "device.attributes.all(d, v, w)",
    "[1].exists_one(x, 1)",
    "[1].map(x, x, x) == [1]",
    "[1].filter(x, 1) == [1]",
    'device.attributes["gpu.nvidia.com"].productName.lowerAscii(1) == ""',
    'device.driver.lowerAscii(1) == ""',
    "timestamp(1) > timestamp(0)",
    'duration(1) > duration("1s")',
    'int("1", 2) == 1',
    'string() == ""',
    "type(1, 2) == int",
    "size() == 0",
    'device.driver[0] == "g"',
    'device.allowMultipleAllocations == "true"',
    "device.allowMultipleAllocations > false",
    "device.allowMultipleAllocations + 1 == 1",
    'device.capacity["gpu.nvidia.com"].memory.asInteger() == 1.0',
    'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("1")) == 0u',
    'device.capacity["gpu.nvidia.com"].memory + quantity("1") == quantity("2")',
    'device.capacity["gpu.nvidia.com"].memory == "40Gi"',
    'device.capacity["gpu.nvidia.com"].memory.isInteger(1)',
    "device.capacity.exists(d, d == 1)",
    "device.attributes.exists(d, d.startsWith(1))",
    '"gpu" in device.driver',
    "1 in device.attributes",
    'device.attributes in ["a"]',
    "[1, 2] == [1.0, 2.0]",
    '{"a": 1} == {"a": 1u}',
    "1u == -1",
    '"a" < 1.0',
    'b"a" == "a"',
    "null == 1",
    'duration("1s") == 1',
    'timestamp("2024-01-01T00:00:00Z") < duration("1s")',
    'device.drivr == "gpu.nvidia.com"',
    'devices.driver == "gpu.nvidia.com"',
    'device.name == "gpu-0"',
    'device.attributes["gpu.nvidia.com"].productName == "A100',
    f'{NVIDIA_CAPACITY}.memory.compareTo(quantity("40Gi") >= 0',
    f'{NVIDIA_CAPACITY}.memory >= quantity("40Gi")',
    f'{NVIDIA_CAPACITY}.memory < quantity("40Gi")',
    f"{NVIDIA_CAPACITY}.memory > 40",
    f"{NVIDIA_CAPACITY}.memory.compareTo(40) >= 0",
    f'{NVIDIA_CAPACITY}.memory.isGreaterThan("40Gi")',
    f'{NVIDIA_CAPACITY}.memory.compareTo(semver("1.0.0")) >= 0',
    'quantity("1Gi").add(1.5).isInteger()',
    'quantity(1) == quantity("1")',
    'semver("1.0.0") > semver("0.1.0")',
    'semver("1.0.0").isGreaterThan(quantity("1"))',
    f'{NVIDIA_CAPACITY}.memory.compareTo(quantity("80GB")) >= 0',
    f'{NVIDIA}.driverVersion.isGreaterThan(semver("v1"))',
    'quantity("1 Gi").isInteger()',
    'semver("1.0").major() == 1',
    "unknownFunction(device.driver)",
    "device.driver.startsWith()",
    'device.driver.startsWith("a", "b")',
    "device.driver.startsWith(1)",
    'device.driver.contains(["gpu"])',
    "size(device.driver, 1) > 0",
    "device.driver",
    "device",
    "device.attributes",
    f"{NVIDIA}",
    f"{NVIDIA_CAPACITY}.memory",
    "1",
    '"true"',
    "null",
    "[true]",
    f"{NVIDIA}.productName",
    "dyn(true)",
    f"{NVIDIA}.index + 1",
    f"{NVIDIA}.index + 1 > 2",
    "device.driver == 1",
    '"a" == 1',
    '"1" < 2',
    "1 == 1.0",
    "1 == 1u",
    "1.0 != 1u",
    '[1, "a"].size() == 2',
    "[1, 2.0].size() == 2",
    '{"a": 1, "b": "x"}.size() == 2',
    '{"a": 1, 2: 1}.size() == 2',
    'duration("1x") > duration("1s")',
    'duration("1h") > "1s"',
    'timestamp("not a time") > timestamp("2024-01-01T00:00:00Z")',
    'timestamp("2024-13-01T00:00:00Z") > timestamp("2024-01-01T00:00:00Z")',
    'device.driver.matches("[")',
    'matches(device.driver, "(a")',
    'device.driver.find("(") == ""',
    'ip("not an ip").family() == 4',
    'cidr("10.0.0.0/33").prefixLength() == 33',
    'url("::not a url").getScheme() == ""',
    '"abc".reverse() == "cba"',
    '"a".charAt() == "a"',
    "[1, 2].sum() == 3.0",
    '["a"].sum() == "a"',
    "lists.range(3, 4).size() == 1",
    "[1].flatten(1, 2) == [1]",
    "sets.contains([1], 1)",
    "format.dns1123Label().validate(1).hasValue()",
    'format.nope().validate("a").hasValue()',
    'device.attributes["gpu.nvidia.com"]["productName"].startsWith(1)',
    "device.capacity.all(d, d > 1)",
    "device.attributes.exists(d)",
    "device.attributes.exists(1, true)",
    "cel.bind(1, 2, true)",
    "cel.bind(x, 1)",
    "optional.of(1) == 1",
    'device.attributes["gpu.nvidia.com"].?productName == "A100"',
    "has(device.attributes)",
    "has(device.driver)",
    "has(device.allowMultipleAllocations)",
    'device.?driver.orValue("") == "gpu.nvidia.com"',
    'device.driver = "gpu.nvidia.com"',
    'device.driver == "a" and true',
    'device.driver == "a" &&',
    "&& true",
    "",
    " ",
    "true true",
    "device.driver == 'a\"",
    'device.drïver == "a"',
    "device.driver == “gpu”",
    "1 / 0 == 1",
    '"\\q" == "q"',
    "0x == 1",
    "9223372036854775808 > 1",
    "device.attributes[1].x == 1",
    "device.capacity[true].memory.isInteger()",
    'device.attributes["a"]["b"]["c"] == 1',
    'device.capacity["a"]["b"]["c"] == 1',
    f"{NVIDIA_CAPACITY}.memory.value == 1",
    "int.max == 1",
    'google.protobuf.Duration{seconds: 1} == duration("1s")',
    'Device{driver: "a"}.driver == "a"',
    "[1, 2, 3][3] == 1",
    "true ? 1 : 2",
    'true ? "a" : 1',
    "!1",
    "-true",
    "device.attributes.size() > 1u",
]

# At the API server's limit of 10240 bytes (a Go len(); the ModelReplica CRD counts 10240 characters): exactly
# at it, one byte past it, and in two-byte characters just past it and just under it.
_PAD = 'device.driver == "'
LIMITS = [
    _PAD + "x" * (MAX_EXPRESSION_BYTES - len(_PAD) - 1) + '"',
    _PAD + "x" * (MAX_EXPRESSION_BYTES - len(_PAD)) + '"',
    _PAD + "é" * ((MAX_EXPRESSION_BYTES - len(_PAD)) // 2 + 1) + '"',
    _PAD + "é" * ((MAX_EXPRESSION_BYTES - len(_PAD) - 1) // 2) + '"',
]

# What can take long enough for the API server's cost estimate to refuse it.
COSTLY = [
    'device.attributes.all(a, device.attributes.all(b, device.capacity.all(c, device.capacity.all(d, a + b + c + d != ""))))',
    'device.driver.split("").all(a, device.driver.split("").all(b, device.driver.split("").all(c, a + b + c != "")))',
    "[1, 2, 3].all(a, [1, 2, 3].all(b, a * b > 0))",
]

# Systematic mutations of the drivers' selectors: (name, the text mutated, or None where it does not apply).
_FIELDS = {"driver": "drivr", "attributes": "atributes", "capacity": "capacities", "allowMultipleAllocations": "allowMultipleAllocation"}


def _misspell(expression: str) -> str | None:
    for field, wrong in _FIELDS.items():
        if f"device.{field}" in expression:
            return expression.replace(f"device.{field}", f"device.{wrong}", 1)
    return None


def _devices(expression: str) -> str | None:
    return expression.replace("device.", "devices.", 1) if "device." in expression else None


def _drop_last(character: str) -> Callable[[str], str | None]:
    def mutate(expression: str) -> str | None:
        at = expression.rfind(character)
        return expression[:at] + expression[at + 1 :] if at >= 0 else None

    return mutate


MUTATIONS = [
    ("misspelt field", _misspell),
    ("devices.", _devices),
    ("missing paren", _drop_last(")")),
    ("missing quote", _drop_last('"')),
    ("int result", lambda e: f"({e}) ? 1 : 0"),
    ("&& string", lambda e: f'({e}) && "yes"'),
    ("negated", lambda e: f"!({e})"),
    ("multi-line", lambda e: f"({e})\n  && true"),
    ("unknown function", lambda e: f"isGood({e})"),
]


def _mutated(bases: list[str]) -> Iterator[str]:
    for _, mutate in MUTATIONS:
        for base in bases:
            mutated = mutate(base)
            if mutated is not None and mutated != base:
                yield mutated


def build_corpus() -> list[str]:
    bases = DRIVER_EXAMPLES + LIBRARY_USES
    everything = bases + MISTAKES + LIMITS + COSTLY + list(_mutated(DRIVER_EXAMPLES))
    return list(dict.fromkeys(everything))  # first occurrence kept, order stable


CORPUS = build_corpus()

# --- the disagreements ------------------------------------------------------------------------------

# Each reason is one class of disagreement: which side rejects ("we" or "server"), and why.
Reason = tuple[str, str]
INTENDED_CONSTANT: Reason = ("we", "intended: a constant quantity(), semver(), ip() or cidr() argument the API server leaves to allocation")
STRING_OF_ABSTRACT: Reason = ("we", "cel-expr-python: abstract types cannot overload string(), so string(ip)/string(cidr) are not declared")
DEVICE_NOT_AN_OBJECT: Reason = (
    "we",
    "cel-expr-python: device's fields are qualified variables, not fields of an object, so has(device.f) and device.?f fail",
)
DYN_RESULT: Reason = (
    "server",
    "the server takes a result of bool or of its attribute type (any), not dyn; cel-expr-python's attributes are dyn, so dyn passes",
)
HOMOGENEOUS_LITERALS: Reason = ("server", "cel-expr-python has no HomogeneousAggregateLiterals: a list or map literal may mix types")
FORMAT_STRING: Reason = ("server", "cel-expr-python does not check a constant format() string against its arguments' types")
OPTIONAL_RESULT: Reason = ("server", "cel-expr-python cannot declare an optional result: format's validate() is declared dyn")
CEL_CPP_OVERLOAD: Reason = ("server", "cel-cpp's standard library has an overload cel-go's lacks (duration(int))")
COST_LIMIT: Reason = (
    "server",
    "cost limit not estimated: the server's estimate exceeds 1000000 (unbounded where it knows no size, e.g. a literal's elements)",
)


def _each(reason: Reason, *expressions: str) -> dict[str, Reason]:
    return dict.fromkeys(expressions, reason)


# Every expression of CORPUS on which our verdict and the API server's differ, by reason.
KNOWN_DISAGREEMENTS: dict[str, Reason] = {
    **_each(
        INTENDED_CONSTANT,
        f'{NVIDIA_CAPACITY}.memory.compareTo(quantity("80GB")) >= 0',
        f'{NVIDIA}.driverVersion.isGreaterThan(semver("v1"))',
        'quantity("1 Gi").isInteger()',
        'semver("1.0").major() == 1',
        'ip("not an ip").family() == 4',
        'cidr("10.0.0.0/33").prefixLength() == 33',
    ),
    **_each(STRING_OF_ABSTRACT, 'string(ip("10.0.0.1")) == "10.0.0.1"', 'string(cidr("10.0.0.0/8")) == "10.0.0.0/8"'),
    **_each(DEVICE_NOT_AN_OBJECT, "has(device.attributes)", "has(device.driver)", 'device.?driver.orValue("") == "gpu.nvidia.com"'),
    **_each(DYN_RESULT, "dyn(true)"),
    **_each(
        HOMOGENEOUS_LITERALS,
        '[1, "a"].size() == 2',
        "[1, 2.0].size() == 2",
        '{"a": 1, "b": "x"}.size() == 2',
        '{"a": 1, 2: 1}.size() == 2',
        "[[1], [[2]]].flatten(2) == [1, 2]",
        '[1, "a"].join(",") == ""',
        '[[1], ["a"]].size() == 2',
    ),
    **_each(
        FORMAT_STRING,
        f'"%s".format([{NVIDIA}.productName]) != ""',
        '"%d".format(["a"]) == ""',
        '"%q".format([1]) == ""',
        '"%s %s".format(["a"]) == ""',
        '"%d".format([1.5]) == ""',
        '"%x".format([1.5]) == ""',
    ),
    **_each(OPTIONAL_RESULT, 'format.dns1123Label().validate("a") == ""'),
    **_each(CEL_CPP_OVERLOAD, 'duration(1) > duration("1s")'),
    **_each(
        COST_LIMIT,
        '["a", "b"].join("-") == "a-b"',
        '["b", "a"].isSorted() == false',
        '[b"a"].isSorted()',
        '["a", "b"].max() == "b"',
        "type(device.driver) == string",
        "type(1) == int",
        COSTLY[0],
        COSTLY[1],
    ),
}

# --- the test -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api() -> Iterator[Any]:
    from peer import real_apiserver

    with real_apiserver() as server:
        server.wait_for_api("resource.k8s.io/v1", "ResourceClaimTemplate")
        server.create_namespace(NAMESPACE)
        yield server


def claim_template(expression: str) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "selectors": [{"cel": {"expression": expression}}]}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "selector", "namespace": NAMESPACE},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


def server_verdict(api: Any, expression: str) -> tuple[bool, str]:
    """(rejected, the server's message): refused only at the selector, or the test is wrong."""
    status, body, _ = api.dry_run_create(claim_template(expression), namespace=NAMESPACE)
    if status == 201:
        return False, ""
    causes = (body.get("details") or {}).get("causes") or [] if isinstance(body, dict) else []
    assert status == 422 and causes, f"{expression!r}: unexpected answer {status}: {body}"
    fields = {c.get("field") for c in causes}
    assert fields == {SELECTOR_FIELD}, f"{expression!r}: refused elsewhere than the selector: {causes}"
    return True, "; ".join(c.get("message", "") for c in causes)


def test_the_corpus_is_large_deterministic_and_lists_only_its_own() -> None:
    assert len(CORPUS) >= 300
    assert build_corpus() == CORPUS
    assert len(set(CORPUS)) == len(CORPUS)
    assert set(KNOWN_DISAGREEMENTS) <= set(CORPUS)
    assert {who for who, _ in KNOWN_DISAGREEMENTS.values()} <= {"we", "server"}


def test_our_verdict_is_the_api_servers(api: Any) -> None:
    server = {expression: server_verdict(api, expression) for expression in CORPUS}
    rejected = sum(r for r, _ in server.values())
    assert rejected >= 100 and len(CORPUS) - rejected >= 100, f"{rejected} rejected of {len(CORPUS)}"

    found: dict[str, tuple[str, str]] = {}
    for expression in CORPUS:
        ours = problems(expression)
        theirs, message = server[expression]
        if bool(ours) != theirs:
            found[expression] = ("we" if ours else "server", "; ".join(p.message for p in ours) or message)

    unlisted = {e: found[e] for e in found if KNOWN_DISAGREEMENTS.get(e, ("", ""))[0] != found[e][0]}
    stale = [e for e in KNOWN_DISAGREEMENTS if e not in found]
    assert not unlisted, "disagreements not in KNOWN_DISAGREEMENTS:\n" + "\n".join(
        f"  {e!r}: {'we reject' if who == 'we' else 'the server rejects'} it: {why}" for e, (who, why) in unlisted.items()
    )
    assert not stale, "KNOWN_DISAGREEMENTS entries that now agree:\n" + "\n".join(f"  {e!r}" for e in stale)
