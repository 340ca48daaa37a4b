"""Framework adapters: sqlmemory as the memory of LangChain, Pydantic AI, the OpenAI Agents
SDK and Google ADK.

Each adapter is a module of its own behind a pip extra of its own
(``pip install 'sqlmemory[langchain]'``, ``[pydantic-ai]``, ``[openai-agents]``,
``[adk]``); the core never imports a framework. The guide is ``docs/integrations/``.
"""
