from enum import StrEnum

class AmqpType(StrEnum):
    AMQP = "amqp"

    def __str__(self) -> str:
        return str(self.value)
