-- Argo CD health of an InferencePool (inference.networking.k8s.io/v1), from each parent
-- Gateway's conditions (gateway-api-inference-extension v1.6.0 api/v1/inferencepool_types.go):
-- Accepted (Unknown/Pending while the gateway decides; False: NotSupportedByParent,
-- HTTPRouteNotAccepted, EndpointPickerRefMissing) and ResolvedRefs (False: InvalidExtensionRef,
-- the picker's Service can't be resolved). A pool no route references yet has no parent, and
-- is Healthy: routing is the route's business, and an app without one must not stay Progressing.
local hs = {}
local parents = obj.status and obj.status.parents or {}
if #parents == 0 then
  hs.status = "Healthy"
  hs.message = "No Gateway routes to this pool yet"
  return hs
end
local generation = obj.metadata.generation or 0
local pending = nil
for _, parent in ipairs(parents) do
  local name = (parent.parentRef and parent.parentRef.name) or "?"
  local found = {}
  for _, condition in ipairs(parent.conditions or {}) do
    found[condition.type] = condition
    if condition.status == "False" then
      hs.status = "Degraded"
      hs.message = "Gateway " .. name .. ": " .. condition.type .. " is False (" .. (condition.reason or "") .. "): " .. (condition.message or "")
      return hs
    end
  end
  for _, wanted in ipairs({"Accepted", "ResolvedRefs"}) do
    local condition = found[wanted]
    if condition == nil or condition.status ~= "True" or (condition.observedGeneration ~= nil and condition.observedGeneration < generation) then
      pending = pending or ("Waiting for Gateway " .. name .. " to report " .. wanted)
    end
  end
end
if pending ~= nil then
  hs.status = "Progressing"
  hs.message = pending
  return hs
end
hs.status = "Healthy"
hs.message = "Accepted by every Gateway that routes to it"
return hs
