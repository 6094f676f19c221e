"""pagewarden for browser-use (pagewarden's ``browser-use`` extra): its actions judged
by the guard before they run, its browser behind the network layer.

    from browser_use import Agent, BrowserSession
    from pagewarden import Guard
    from pagewarden.integrations.browser_use import GuardedTools, browser_profile, network_layer

    guard = Guard(policies=policies, goal=task)
    tools = GuardedTools(guard)
    with network_layer(guard) as proxy:
        session = BrowserSession(browser_profile=browser_profile(network=proxy))
        agent = Agent(task=task, llm=llm, tools=tools, browser_session=session,
                      register_new_step_callback=tools.on_step)
        await agent.run()

See docs/guides/browser-use.md.

Importing it turns browser-use's version check off (``BROWSER_USE_VERSION_CHECK=false``,
unless set): on every run it asks the package index for a newer browser-use and offers one
that cannot be installed next to pagewarden.
"""

import os

os.environ.setdefault("BROWSER_USE_VERSION_CHECK", "false")

from pagewarden.integrations.browser_use._network import browser_profile, network_layer
from pagewarden.integrations.browser_use._tools import READ_ONLY_ACTIONS, GuardedTools

__all__ = ["READ_ONLY_ACTIONS", "GuardedTools", "browser_profile", "network_layer"]
