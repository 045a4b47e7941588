// memdir for OpenCode, written by `memdir init --client opencode` (a later init rewrites it).
// OpenCode has no command hooks: this plugin runs memdir's hook commands (the ones Claude Code runs)
// at OpenCode's own events and hands their context to the model in the system prompt.
import { spawn } from "node:child_process";

const HOOK = __HOOK__; // memdir-hook (mcp_server/clients/hook_script.py), or ["memdir", "hook"]
const VAULT = __VAULT__;
const WAIT_MS = 10000; // a hook gives up on the server within a second; this only bounds a stuck process

function hook(event, payload, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(HOOK[0], [...HOOK.slice(1), event, "--vault", VAULT, "--client", "opencode"], { cwd, stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve("");
      return;
    }
    const timer = setTimeout(() => child.kill(), WAIT_MS);
    child.stdout.on("data", (data) => (out += data));
    child.on("error", () => resolve(""));
    child.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out).hookSpecificOutput.additionalContext || "");
      } catch {
        resolve("");
      }
    });
    child.stdin.end(JSON.stringify({ ...payload, cwd }));
  });
}

export const MemdirPlugin = async ({ client, directory }) => {
  const oriented = new Set();
  const context = new Map(); // session -> what this turn's hooks returned
  let latest = "";
  return {
    "chat.message": async (input, output) => {
      const session = input.sessionID;
      const prompt = output.parts.filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
      const parts = [];
      if (!oriented.has(session)) {
        oriented.add(session);
        parts.push(await hook("session-start", { session_id: session, hook_event_name: "SessionStart", source: "startup" }, directory));
      }
      parts.push(await hook("prompt", { session_id: session, hook_event_name: "UserPromptSubmit", prompt }, directory));
      latest = parts.filter(Boolean).join("\n\n");
      context.set(session, latest);
    },
    "experimental.chat.system.transform": async (input, output) => {
      const text = input && input.sessionID ? context.get(input.sessionID) : latest;
      if (text) output.system.push(text);
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const session = event.properties.sessionID;
      let answer = "";
      try {
        const messages = (await client.session.messages({ path: { id: session } })).data || [];
        const last = [...messages].reverse().find((m) => m.info.role === "assistant");
        answer = last ? last.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n") : "";
      } catch {}
      await hook("stop", { session_id: session, hook_event_name: "Stop", last_assistant_message: answer, stop_hook_active: false }, directory);
    },
  };
};
