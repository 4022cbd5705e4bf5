"""The CEL environment kube-apiserver compiles a DRA device selector in, declared for cel-expr-python.

A ModelReplica's `deviceRequests[].selectors[].cel` becomes a ResourceClaimTemplate's
`spec.spec.devices.requests[].exactly.selectors[].cel.expression`, which kube-apiserver v1.37
compiles on create (k8s.io/kubernetes pkg/apis/resource/validation `validateCELExpression`) in:

- the `device` variable of k8s.io/dynamic-resource-allocation@v0.37.2 `cel/compile.go`, as the
  default feature gates of 1.37 shape it (DRAConsumableCapacity on: `allowMultipleAllocations`;
  DRAListTypeAttributes off: attributes are scalars, no `includes`);
- the libraries of k8s.io/apiserver@v0.37.2 `pkg/cel/environment/base.go` up to the compatibility
  version 1.36 that a 1.37 server compiles new expressions at (so not `library.Lists` v1);
- and cel-go's standard library with `CrossTypeNumericComparisons` (`1 < 2.0`).

cel-expr-python has no struct types but proto messages, so `device`'s fields are declared as
qualified variables (`device.driver`, ...): CEL resolves `device.capacity` to the variable of that
name, which types `capacity` exactly (map of map of Quantity) where a message field could only be a
Struct, and a misspelt field is an undeclared reference we then report as the field it is not.
Where this environment and the API server's still judge differently is listed, by reason, in
`KNOWN_DISAGREEMENTS` of tests/test_dra_cel_apiserver.py, which holds the list true against the
real server (and docs/validation.md's "Selector expressions (CEL)").
"""

from __future__ import annotations

from typing import Any

# The environment's version: part of the verdict cache's key, so a change here (or a new
# cel-expr-python) judges every expression anew. Raise it with any change to what is declared.
VERSION = "k8s-1.37-dra-1"

DEVICE = "device"
# The device's fields, in compile.go's `fieldsV134ConsumableCapacity` (ConsumableCapacity is on by
# default from 1.36).
DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")

# cel-cpp's registered libraries, at the versions whose functions are those of the API server's:
# cel-go's ext.Strings v2, ext.Lists v3 (cel-cpp's lists v2 declares the same functions),
# ext.Sets, ext.Bindings, ext.TwoVarComprehensions and optional types.
_EXTENSIONS_YAML = """\
extensions:
- name: strings
  version: 2
- name: lists
  version: 2
- name: sets
- name: bindings
- name: optional
- name: two-var-comprehensions
"""

_NAMED_FORMATS = (
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
)


def new_environment() -> Any:
    """A cel-expr-python Env that compiles and type-checks as the API server does a selector."""
    from cel_expr_python import cel

    T = cel.Type
    quantity = T.AbstractType("kubernetes.Quantity")
    semver = T.AbstractType("kubernetes.Semver")
    url = T.AbstractType("kubernetes.URL")
    ip = T.AbstractType("net.IP")
    cidr = T.AbstractType("net.CIDR")
    named_format = T.AbstractType("kubernetes.NamedFormat")
    S, B, N, U, D, DYN = T.STRING, T.BOOL, T.INT, T.UINT, T.DOUBLE, T.DYN  # N: an int

    def fn(name: str, *overloads: tuple[str, Any, list[Any], bool]) -> Any:
        return cel.FunctionDecl(name, [cel.Overload(oid, ret, params, is_member=member) for oid, ret, params, member in overloads])

    def member(oid: str, ret: Any, *params: Any) -> tuple[str, Any, list[Any], bool]:
        return (oid, ret, list(params), True)

    def call(oid: str, ret: Any, *params: Any) -> tuple[str, Any, list[Any], bool]:
        return (oid, ret, list(params), False)

    comparable = [
        ("int", N),
        ("uint", U),
        ("double", D),
        ("bool", B),
        ("duration", T.DURATION),
        ("timestamp", T.TIMESTAMP),
        ("string", S),
        ("bytes", T.BYTES),
    ]
    summable = [("int", N), ("uint", U), ("double", D), ("duration", T.DURATION)]

    functions = [
        # library.Quantity
        fn("quantity", call("string_to_quantity", quantity, S)),
        fn("isQuantity", call("is_quantity_string", B, S)),
        fn("sign", call("quantity_sign", N, quantity)),
        fn(
            "isGreaterThan",
            member("quantity_is_greater_than", B, quantity, quantity),
            member("semver_is_greater_than", B, semver, semver),
        ),
        fn(
            "isLessThan",
            member("quantity_is_less_than", B, quantity, quantity),
            member("semver_is_less_than", B, semver, semver),
        ),
        fn(
            "compareTo",
            member("quantity_compare_to", N, quantity, quantity),
            member("semver_compare_to", N, semver, semver),
        ),
        fn("asApproximateFloat", member("quantity_get_float", D, quantity)),
        fn("asInteger", member("quantity_get_int", N, quantity)),
        fn("isInteger", member("quantity_is_integer", B, quantity)),
        fn("add", member("quantity_add", quantity, quantity, quantity), member("quantity_add_int", quantity, quantity, N)),
        fn("sub", member("quantity_sub", quantity, quantity, quantity), member("quantity_sub_int", quantity, quantity, N)),
        # library.SemverLib v1
        fn("semver", call("string_to_semver", semver, S), call("string_bool_to_semver", semver, S, B)),
        fn("isSemver", call("is_semver_string", B, S), call("is_semver_string_bool", B, S, B)),
        fn("major", member("semver_major", N, semver)),
        fn("minor", member("semver_minor", N, semver)),
        fn("patch", member("semver_patch", N, semver)),
        # library.URLs
        fn("url", call("string_to_url", url, S)),
        fn("isURL", call("is_url_string", B, S)),
        *(
            fn(name, member(oid, S, url))
            for name, oid in [
                ("getScheme", "url_get_scheme"),
                ("getHost", "url_get_host"),
                ("getHostname", "url_get_hostname"),
                ("getPort", "url_get_port"),
                ("getEscapedPath", "url_get_escaped_path"),
            ]
        ),
        fn("getQuery", member("url_get_query", T.Map(S, T.List(S)), url)),
        # library.Regex
        fn("find", member("string_find_string", S, S, S)),
        fn("findAll", member("string_find_all_string", T.List(S), S, S), member("string_find_all_string_int", T.List(S), S, S, N)),
        # library.IP and library.CIDR
        fn("ip", call("string_to_ip", ip, S), member("cidr_ip", ip, cidr)),
        fn("family", member("ip_family", N, ip)),
        fn("ip.isCanonical", call("ip_is_canonical", B, S)),
        *(
            fn(name, member(oid, B, ip))
            for name, oid in [
                ("isUnspecified", "ip_is_unspecified"),
                ("isLoopback", "ip_is_loopback"),
                ("isLinkLocalMulticast", "ip_is_link_local_multicast"),
                ("isLinkLocalUnicast", "ip_is_link_local_unicast"),
                ("isGlobalUnicast", "ip_is_global_unicast"),
            ]
        ),
        fn("isIP", call("is_ip", B, S)),
        fn("cidr", call("string_to_cidr", cidr, S)),
        fn("containsIP", member("cidr_contains_ip_string", B, cidr, S), member("cidr_contains_ip_ip", B, cidr, ip)),
        fn("containsCIDR", member("cidr_contains_cidr_string", B, cidr, S), member("cidr_contains_cidr", B, cidr, cidr)),
        fn("prefixLength", member("cidr_prefix_length", N, cidr)),
        fn("masked", member("cidr_masked", cidr, cidr)),
        fn("isCIDR", call("is_cidr", B, S)),
        # library.Format. `validate` and `format.named` return optionals, declared dyn: an optional
        # type declared here does not take the optional library's `hasValue()` and `value()`.
        *(fn(f"format.{name}", call(f"format.{name}", named_format)) for name in _NAMED_FORMATS),
        fn("validate", member("format-validate", DYN, named_format, S)),
        fn("format.named", call("format-named", DYN, S)),
        # library.Lists v0
        fn("isSorted", *(member(f"list_{n}_is_sorted_bool", B, T.List(t)) for n, t in comparable)),
        fn("sum", *(member(f"list_{n}_sum_{n}", t, T.List(t)) for n, t in summable)),
        fn("max", *(member(f"list_{n}_max_{n}", t, T.List(t)) for n, t in comparable)),
        fn("min", *(member(f"list_{n}_min_{n}", t, T.List(t)) for n, t in comparable)),
    ]
    # Overloads of built-in operators go in an extension, which may add to a declared function
    # (`functions=` may only declare new ones): cel-go's CrossTypeNumericComparisons, which base.go
    # turns on from 1.28, and list overloads of string functions. (An extension's abstract types collide with `string(string)`, so IP's and
    # CIDR's `string()` overloads are not declared: a listed disagreement.)
    numbers = [("int64", N), ("uint64", U), ("double", D)]
    cross = [
        fn(op, *(call(f"{name}_{a}_{b}", B, ta, tb) for a, ta in numbers for b, tb in numbers if a != b))
        for op, name in [("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")]
    ]
    builtins = cel.CelExtension(
        "kubernetes-builtin-overloads",
        [
            *cross,
            # library.Lists v0, beside ext.Strings' `indexOf` and `lastIndexOf` of a string
            fn("indexOf", member("list_a_index_of_int", N, T.List(DYN), DYN)),
            fn("lastIndexOf", member("list_a_last_index_of_int", N, T.List(DYN), DYN)),
        ],
    )
    variables = {
        f"{DEVICE}.driver": S,
        f"{DEVICE}.attributes": T.Map(S, T.Map(S, DYN)),
        f"{DEVICE}.capacity": T.Map(S, T.Map(S, quantity)),
        f"{DEVICE}.allowMultipleAllocations": B,
    }
    config = cel.NewEnvConfigFromYaml(_EXTENSIONS_YAML)
    return cel.NewEnv(config=config, variables=variables, extensions=[builtins], functions=functions)
