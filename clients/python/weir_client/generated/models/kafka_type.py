from enum import StrEnum

class KafkaType(StrEnum):
    KAFKA = "kafka"

    def __str__(self) -> str:
        return str(self.value)
