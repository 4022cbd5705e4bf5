-- Argo CD health of a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), from the conditions its
-- controller sets (kubernetes-sigs/lws v0.10.0 pkg/controllers/leaderworkerset_controller.go,
-- updateConditions): Available once every group is ready and updated, UpdateInProgress during a
-- rolling update, Progressing otherwise. Without this, Argo CD calls an app Healthy while its
-- gangs are still loading their weights.
local hs = {}
local status = obj.status
local wanted = (obj.spec and obj.spec.replicas) or 1
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the LeaderWorkerSet controller"
  return hs
end
local generation = obj.metadata.generation or 0
if status.observedGeneration ~= nil and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the LeaderWorkerSet controller to observe generation " .. generation
  return hs
end
local ready = status.readyReplicas or 0
local true_conditions = {}
for _, condition in ipairs(status.conditions) do
  if condition.status == "True" and (condition.observedGeneration == nil or condition.observedGeneration >= generation) then
    true_conditions[condition.type] = condition
  end
end
if true_conditions["UpdateInProgress"] ~= nil then
  hs.status = "Progressing"
  hs.message = "Rolling update: " .. (status.updatedReplicas or 0) .. " of " .. wanted .. " groups updated, " .. ready .. " ready"
  return hs
end
if true_conditions["Available"] ~= nil and ready >= wanted then
  hs.status = "Healthy"
  hs.message = "All " .. wanted .. " groups are ready"
  return hs
end
hs.status = "Progressing"
hs.message = ready .. " of " .. wanted .. " groups ready"
return hs
