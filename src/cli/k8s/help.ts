// `warden k8s` help texts, alone so `warden --help` loads none of the k8s code.

export const K8S_HELP = `Usage: warden k8s job --image IMAGE [options] -- COMMAND [ARGS...]
       warden k8s sandbox --image IMAGE [options]
       warden k8s verdict NAMESPACE/POD[/CONTAINER] [FILE]

Warden inside Kubernetes (docs/kubernetes.md):
  job       print a batch/v1 Job running COMMAND under warden run, whose
            podFailurePolicy acts on Warden's exit codes (see warden k8s job --help)
  sandbox   print an agent-sandbox Sandbox running warden serve
  verdict   record a pod's termination message in this machine's history

A pod's Warden is reached with warden remote add NAME --k8s-pod NS/POD.`;

export const K8S_JOB_HELP = `Usage: warden k8s job --image IMAGE [options] -- COMMAND [ARGS...]

Prints a batch/v1 Job (YAML; --json for JSON) for kubectl apply -f -. Its
container runs warden run --exit-codes k8s --termination-log [--limit]
[--memory] -- COMMAND, so the Job sees Warden's verdict: a podFailurePolicy
fails the Job (FailIndex with --indexed) at once on 124 (timed out), 125
(Warden's own error), 126 and 127 (cannot run, not found), counts the OOM code
against the retries and ignores disruptions (DisruptionTarget); the pod's
activeDeadlineSeconds is the limit plus --deadline-grace, so Kubernetes never
ends it before Warden's own deadline; the container's memory limit is --memory
plus 256Mi, so the OOM kill happens in Warden's cgroup, where it is confirmed.
The image needs Node 20.19+ and warden on PATH (or --warden).

Options:
  --image IMAGE          the container image (required)
  --name NAME            the Job's name (default warden-PROGRAM)
  --namespace NS         metadata.namespace (default: kubectl's)
  --container NAME       the container's name (default task)
  --limit DURATION       warden run --limit: the run's time limit (e.g. 30m)
  --memory SIZE          warden run --memory, as Kubernetes writes sizes: 512Mi, 2Gi (1024s),
                         2G (1000s); needs a writable memory cgroup in the container
  --indexed N            an Indexed Job of N completions (JOB_COMPLETION_INDEX in each pod)
  --parallelism P        with --indexed: pods at once (default N)
  --backoff-limit N      retries: backoffLimit, or backoffLimitPerIndex with --indexed (default 3)
  --oom-exit-code N      warden run --oom-exit-code: the status of a confirmed OOM kill
                         (default 137; 75, say, tells it from other SIGKILLs)
  --deadline-grace DUR   activeDeadlineSeconds beyond --limit (default 5m: the pod's clock
                         starts before the image is pulled)
  --warden CMD           how the image runs warden (default warden; words split at spaces)
  --json                 print JSON instead of YAML`;

export const K8S_SANDBOX_HELP = `Usage: warden k8s sandbox --image IMAGE [options]

Prints an agent-sandbox Sandbox (agents.x-k8s.io/v1alpha1, from
kubernetes-sigs/agent-sandbox) whose pod runs warden serve --no-tcp with its
history in a volume, for agents' runs inside it. Reach it with
warden remote add NAME --k8s-pod NAMESPACE/POD, then warden --remote NAME ...
(or warden --remote NAME mcp for an agent outside).

Options:
  --image IMAGE        the container image, with Node 20.19+ and warden (required)
  --name NAME          the Sandbox's name (default warden)
  --namespace NS       metadata.namespace (default: kubectl's)
  --container NAME     the container's name (default warden)
  --memory SIZE        the container's memory limit (512Mi, 4Gi)
  --storage SIZE       the history's volume claim (default 1Gi; 0: an emptyDir, lost with the pod)
  --warden CMD         how the image runs warden (default warden)
  --json               print JSON instead of YAML`;

export const K8S_VERDICT_HELP = `Usage: warden k8s verdict NAMESPACE/POD[/CONTAINER] [FILE] [--json]

Records a pod's termination message (written by warden run --termination-log)
in this machine's history, as a run of host k8s:NAMESPACE/POD: warden list,
warden show and the app then show it like any other. The message is read from
FILE, or from stdin without one:

  kubectl get pod -n NS POD -o jsonpath='{..terminated.message}' | warden k8s verdict NS/POD

The run keeps its id from the pod (reading it again changes nothing); its
output is the newest lines the message kept. A message of a run Warden
refused to start is recorded as spawn-failed with why. Text that is not
Warden's message (the log's tail Kubernetes put there instead) is refused.`;
