"""Upstream expectations shared by several test files, transcribed once (never derived from our own code)."""

# pkg/scheduler/apis/config/v1/defaults_test.go, TestSchedulerDefaults "two profiles" (1.31-1.33): the default
# multiPoint enabled list getDefaultPlugins() gives a profile, with score weights (0 where upstream sets none).
MULTIPOINT_1_31_TO_1_33 = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
)
