"""Framework adapters: sqlmemory as the memory of LangChain, Pydantic AI and the OpenAI Agents SDK.

Each adapter is a module of its own behind a pip extra of its own
(``pip install 'sqlmemory[langchain]'``, ``[pydantic-ai]``, ``[openai-agents]``); the core
never imports a framework. The guide is ``docs/integrations/``.
"""
