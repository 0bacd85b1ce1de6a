"""
A keel run from Python, with nothing of keel's but its contract files: starts an agentRun,
waits for the call that needs approval (the `status` query), approves it (the `approve`
Update), then reads the result and the events. Every payload sent and received is checked
against the contract's JSON Schemas when the `jsonschema` package is installed.

    pip install temporalio jsonschema
    python run_and_approve.py --contract node_modules/keel/contract --agent deployer \
        --prompt "Ship it." [--address 127.0.0.1:7233] [--task-queue keel] [--model openai:gpt-4.1]

Prints one JSON object: the workflow ID, the decided call, the result, the event types, and
whether the payloads were validated.
"""

import argparse
import asyncio
import json
import time
import uuid
from pathlib import Path

from temporalio.client import Client

try:
    import jsonschema
except ImportError:  # validation is optional
    jsonschema = None


class Contract:
    """One workflow type's interface, read from contract/<workflowType>.schema.json."""

    def __init__(self, path: Path):
        self.doc = json.loads(path.read_text())
        self.keel = self.doc["x-keel"]
        self.defs = self.doc["$defs"]
        self.checked = 0

    @property
    def workflow_type(self) -> str:
        return self.keel["workflowType"]

    def check(self, schema: dict, value, what: str):
        """Validates `value` against a schema of the contract (its $refs point into $defs)."""
        if jsonschema is None:
            return value
        try:
            jsonschema.Draft202012Validator({**schema, "$defs": self.defs}).validate(value)
        except jsonschema.ValidationError as err:
            raise SystemExit(f"{what} does not match the contract: {err.message} at {list(err.absolute_path)}")
        self.checked += 1
        return value

    def input(self, value):
        return self.check(self.keel["input"], value, f"{self.workflow_type} input")

    def result(self, value):
        return self.check(self.keel["result"], value, f"{self.workflow_type} result")

    def arg(self, kind: str, name: str, value, index: int = 0):
        op = self.keel[kind][name]  # KeyError: the contract has no such operation
        return self.check(op["args"][index], value, f"{kind[:-1]} {name} argument")

    def answer(self, kind: str, name: str, value):
        return self.check(self.keel[kind][name]["result"], value, f"{kind[:-1]} {name} answer")


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--contract", required=True, help="the folder of the contract files")
    p.add_argument("--address", default="127.0.0.1:7233")
    p.add_argument("--namespace", default="default")
    p.add_argument("--task-queue")
    p.add_argument("--agent", required=True)
    p.add_argument("--prompt", required=True)
    p.add_argument("--model", help="provider:model instead of the agent's")
    p.add_argument("--workflow-id")
    p.add_argument("--timeout", type=float, default=60)
    args = p.parse_args()

    run = Contract(Path(args.contract) / "agentRun.schema.json")
    client = await Client.connect(args.address, namespace=args.namespace)

    run_input = {"agent": args.agent, "input": args.prompt}
    if args.model:
        run_input["overrides"] = {"model": args.model}
    handle = await client.start_workflow(
        run.workflow_type,
        run.input(run_input),
        id=args.workflow_id or f"py-{uuid.uuid4()}",
        task_queue=args.task_queue or run.keel["taskQueue"],
    )

    # Wait, on the status query, for a call to approve.
    deadline = time.monotonic() + args.timeout
    while True:
        state = run.answer("queries", "status", await handle.query("status"))
        if state["status"] == "awaiting_approval" and state.get("pending"):
            break
        if state["status"] not in ("running", "awaiting_approval"):
            raise SystemExit(f"the run ended {state['status']} before any call waited for approval")
        if time.monotonic() > deadline:
            raise SystemExit(f"no call waited for approval within {args.timeout} s; last status: {state}")
        await asyncio.sleep(0.2)
    pending = state["pending"][0]

    decision = run.arg("updates", "approve", {"callId": pending["callId"], "decision": "allow", "reason": "approved from Python"})
    receipt = run.answer("updates", "approve", await handle.execute_update("approve", decision))

    result = run.result(await handle.result())

    page = run.answer("queries", "events", await handle.query("events", run.arg("queries", "events", 0)))
    for event in page["events"]:
        if event["type"] not in run.keel["eventTypes"]:
            raise SystemExit(f"an event of a type the contract does not list: {event['type']}")

    print(
        json.dumps(
            {
                "workflowId": handle.id,
                "pending": pending,
                "receipt": receipt,
                "result": result,
                "eventTypes": [e["type"] for e in page["events"]],
                "decided": [e for e in page["events"] if e["type"] == "approval.decided"],
                "validated": run.checked if jsonschema is not None else None,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
