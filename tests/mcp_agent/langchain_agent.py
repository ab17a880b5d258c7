"""A LangChain agent loop over the proxy's /mcp, through langchain-mcp-adapters (LangChain's own
MCP client), with a scripted chat model in place of an LLM (no network): it calls get-schema,
then the seed query with read-cypher, then a broken query, then answers.
Usage: python langchain_agent.py HTTP_URI USER PASSWORD SEED_QUERY; prints one JSON object."""

from __future__ import annotations

import asyncio
import base64
import json
import sys

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_mcp_adapters.client import MultiServerMCPClient

QUESTION = ("How much smaller is the TROLL field's production typically during the summer months "
            "compared with the rest of the year?")


def scripted_model(seed_query: str) -> FakeMessagesListChatModel:
    def calls(name: str, **args) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
    return FakeMessagesListChatModel(responses=[
        calls("get-schema"),
        calls("read-cypher", query=seed_query),
        calls("read-cypher", query="MATCH (f:Field RETURN f"),
        AIMessage(content="About 8% lower in summer."),
    ])


def _text(content: str | list) -> str:
    """A ToolMessage's content: text, or a list of content blocks."""
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") if isinstance(block, dict) else str(block) for block in content)


async def main() -> None:
    uri, user, password, seed_query = sys.argv[1:5]
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    client = MultiServerMCPClient({"graph": {"transport": "streamable_http", "url": uri + "/mcp",
                                             "headers": {"Authorization": f"Basic {token}"}}})
    tools = {tool.name: tool for tool in await client.get_tools()}
    model = scripted_model(seed_query)
    messages = [HumanMessage(QUESTION)]
    steps = []
    while True:                                   # the ReAct loop: model -> tools -> model ...
        reply = await model.ainvoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            result = await tools[call["name"]].ainvoke(call)      # a ToolMessage
            messages.append(result)
            steps.append({"tool": call["name"], "status": result.status, "text": _text(result.content)})
    print(json.dumps({
        "tools": sorted(tools),
        "openai_parameters": {name: sorted(convert_to_openai_tool(tool)["function"]["parameters"]["properties"])
                              for name, tool in tools.items()},
        "steps": steps,
        "answer": messages[-1].content,
    }))


if __name__ == "__main__":
    asyncio.run(main())
