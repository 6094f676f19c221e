"""The guard's guidance, told to an MCP client's model.

The guard writes guidance for any agent, and names the agent-side action that tells the user
something (``send_msg_to_user``, BrowserGym's and ST-WebAgentBench's name for it). An MCP
server has no such tool: the model speaks to the user in its own reply, at the end of its
turn. `for_mcp` says that instead, and `approval_note` says what the model can do when an
action needs a person's approval.
"""

from __future__ import annotations

import re

__all__ = ["approval_note", "for_mcp"]

_NAMED_TOOL = re.compile(
    r"\s*\((?:send_msg_to_user|Guard\.message_user|page\.message_user\(\.\.\.\))\)", re.IGNORECASE
)
_SEND_MESSAGE = re.compile(r"\bsend (?:them|the user) a message\b", re.IGNORECASE)
_BARE_TOOL = re.compile(r"\bsend_msg_to_user\b")

#: What replaces a mention of the message tool: the model's own reply.
REPLY = "in your reply to the user (this browser has no tool to message the user: end your turn and ask)"


def for_mcp(text: str) -> str:
    """`text` (a refusal's explanation and guidance) with every mention of a tool to message
    the user replaced by what an MCP client's model does instead: tell the user in its reply."""
    text = _NAMED_TOOL.sub(" " + REPLY, text)
    text = _SEND_MESSAGE.sub("tell them in your reply", text)
    return _BARE_TOOL.sub("your reply to the user", text)


def approval_note(*, supervised: bool) -> str:
    """What the model reads after a refused ASK: with a console, the person did not approve;
    without one, nobody could, and what it can do instead."""
    if supervised:
        return "\nThe person supervising this session did not approve it."
    return (
        "\nThis action needs a person's approval and no pagewarden console supervises this session, so it "
        "was refused. Choose another way; or stop and tell the user in your reply what you wanted to do "
        "and why: they can do it themselves, or restart the server with --console so that a person can "
        "approve it."
    )
