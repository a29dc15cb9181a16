"""A team's contract reaches every surface of the runtime: the writer's instructions and JSON schema
as a server receives them, the header, the remembered inventory and the traces' keys."""

import json

from tests.live.helpers import is_writer, writer_format_of
from workbench.memory import SEED, Contract, WorkingMemory
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.config import WriterFormat, WriterKind
from workbench.runtime.tracing import allowed_keys
from workbench.runtime.writer import extraction_model, writer_instructions
from workbench.session.assemble import assemble

TEAM = Contract(("service", "region", "owner"), max_facts=3, max_value_chars=64)


def key_description(schema: dict) -> str:
    return schema["$defs"]["FactCandidate"]["properties"]["key"]["description"]


def test_the_writers_instructions_and_schema_name_the_contracts_keys():
    assert "key is one of:\n  owner, region, service." in writer_instructions(TEAM)
    assert "At most 3 facts" in writer_instructions(TEAM) and "module" not in writer_instructions(TEAM)
    assert "module, priority, product" in writer_instructions(SEED)
    schema = extraction_model(TEAM).model_json_schema()
    assert key_description(schema) == "One of the allowed keys (owner, region, service), exactly as the user wrote it."
    assert schema["additionalProperties"] is False and schema["required"] == ["facts"]
    parsed = extraction_model(TEAM).model_validate_json('{"facts": [{"key": "x", "value": "y", "evidence": "x=y"}]}')
    assert parsed.facts[0].key == "x"  # a key outside the contract is the host's rejection, not a parse failure


async def test_a_server_receives_the_contracts_keys_and_the_host_admits_them(loopback):
    for writer_format in (WriterFormat.JSON_SCHEMA, WriterFormat.JSON_OBJECT_SCHEMA):
        config = ModelConfig(model="loopback-model", base_url=loopback.base_url, writer_format=writer_format)
        session = assemble(build_models(config), memory=WorkingMemory(TEAM), timeout=30)
        assert session.state().status.contract == TEAM
        assert (await session.ask("support", "service=billing-api; region=eu-west")).result.ok
        assert {f.key: f.value for f in session.runtime.memory.facts()} == {
            "service": "billing-api",
            "region": "eu-west",
        }
        request = [r for r in loopback.requests if is_writer(r)][-1]
        assert writer_format_of(request) == str(writer_format)
        response_format = request["response_format"]
        schema = response_format["json_schema"]["schema"] if writer_format is WriterFormat.JSON_SCHEMA else None
        schema = schema or response_format["schema"]
        assert "owner, region, service" in json.dumps(schema)
        assert "owner, region, service." in request["messages"][0]["content"]


async def test_the_header_and_the_inventory_follow_the_contract():
    session = assemble(build_models(ModelConfig()), memory=WorkingMemory(TEAM), writer=WriterKind.HOST)
    assert (await session.ask("support", "owner=ops; module=Billing")).refused  # module: not this contract's key
    assert (await session.ask("support", "owner=ops")).result.ok
    status = session.runtime.status
    assert "keys: owner, region, service" in status.summary
    assert "keys: the contract declared for this run" in status.explained()
    seed_status = assemble(build_models(ModelConfig())).runtime.status
    assert "keys:" not in seed_status.summary and "keys:" not in seed_status.explained()
    remembered = await session.remembered()
    working = remembered.systems[0]
    assert working.description.startswith("1 of at most 3 facts")
    assert set(remembered.values) <= set(TEAM.keys) and remembered.values["owner"] == ("ops",)


def test_traces_name_only_the_contracts_keys():
    assert allowed_keys(["service", "module", None, "password"], TEAM) == ["service"]
    assert allowed_keys(["service", "module"], SEED) == ["module"]
