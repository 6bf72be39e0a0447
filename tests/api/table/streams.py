"""Table environments of the table tests: STREAMING mode, and views of rows whose
rowtime comes from a Schema's watermark."""
from api.common import Types
from api.datastream import StreamExecutionEnvironment
from api.table import DataTypes, EnvironmentSettings, Schema, StreamTableEnvironment


def streaming_t_env(env: StreamExecutionEnvironment = None, parallelism: int = 2):
    """A StreamTableEnvironment in STREAMING mode over ``env`` (default: a new one of
    ``parallelism``)."""
    if env is None:
        env = StreamExecutionEnvironment.get_execution_environment()
        env.set_parallelism(parallelism)
    return StreamTableEnvironment.create(
        env, environment_settings=EnvironmentSettings.in_streaming_mode())


def rowtime_view(env, t_env, name: str, rows, key: tuple, delay: int) -> None:
    """View ``name`` of ``rows`` (key, v, ms): the key column ``key`` = (name, TypeInfo,
    DataType), v INT, ms BIGINT, the rowtime ts = TO_TIMESTAMP_LTZ(ms, 3) and the watermark
    ts - ``delay`` seconds."""
    key_name, key_type, key_data_type = key
    stream = env.from_collection(list(rows), Types.ROW_NAMED(
        [key_name, 'v', 'ms'], [key_type, Types.INT(), Types.LONG()]))
    t_env.create_temporary_view(name, stream, Schema.new_builder()
                                .column(key_name, key_data_type).column('v', DataTypes.INT())
                                .column('ms', DataTypes.BIGINT())
                                .column_by_expression('ts', "TO_TIMESTAMP_LTZ(ms, 3)")
                                .watermark('ts', f"ts - INTERVAL '{delay}' SECOND")
                                .build())
